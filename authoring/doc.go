// Package authoring turns the SQL statements that change policies into
// Ranger writes: GRANT and REVOKE (HiveServer2's mapping, through Ranger's
// grant and revoke), CREATE/ALTER/DROP POLICY (items of the table's one
// row-filter policy), SECURITY LABEL FOR pgranger (a column's mask policy)
// and SECURITY LABEL FOR pgranger_tags (the tags of a column or table).
//
// Every statement goes the same way (docs/authoring.md,
// docs/architecture.md "The path of an authoring statement"):
//
//  1. plan: the statement is parsed with PostgreSQL's parser and mapped
//     to Ranger resources, access types and principals — one file per
//     statement kind (grant.go, rowfilter.go, mask.go, tags.go); what has
//     no Ranger meaning is refused with 0A000 naming it;
//  2. authorise: the session's subject must be a super user, or hold
//     delegated admin covering every access the change concerns on its
//     resource, decided by the policy engine that enforces reads
//     (policy.WantAdmin); a refusal is 42501 and nothing is
//     sent;
//  3. write, one resource at a time within this process: the policy is
//     read again from the source right before the change (Ranger has no
//     optimistic concurrency), changed, written (Store: Ranger Admin's
//     REST API or the policy file), the policies in force are reloaded so
//     the next statement of any session sees the change, and the change is
//     verified in what was reloaded.
//
// The SQLSTATE of every refusal (errors.go):
//
//	42501  the subject may not make the change (pgranger's check, or Ranger's 403)
//	0A000  a construct Ranger cannot express (a privilege, RESTRICTIVE, WITH CHECK,
//	       FOR INSERT, a PostgreSQL-only expression, an object that is not a table)
//	42704  an unknown grantee; ALTER/DROP POLICY of a policy the table does not have
//	42P09  a grantee name that is a user, a group and/or a role at once
//	42710  CREATE POLICY or a rename to a name the table has; Ranger's 3006 and 3010
//	42P01, 42703  a table or column the database does not have
//	42601  a security label that does not parse
//	22023  any other validation failure of Ranger Admin (400)
//	40001  the change is not there after the write: another writer replaced it
//	58000  Ranger Admin unreachable, failing (5xx) or refusing pgranger's credentials (401)
//	58030  the policy or tag file could not be read or written
//
// 25001 (inside a transaction block or a pipeline) is pgwire's: it knows
// the session's transaction state.
package authoring
