package policy

import "strconv"

// Verdict words an access decision for a person, the same wherever
// pgranger explains one (the Detail of a denial, `pgranger check`):
// "allowed by policy 3", "allowed (super user)", "denied by policy 7", or,
// when no policy decided (the default deny), "no policy grants select"
// for access "select".
func (d Decision) Verdict(access string) string {
	switch {
	case d.PolicyID == -1:
		return "allowed (super user)"
	case d.Allowed:
		return "allowed by policy " + strconv.FormatInt(d.PolicyID, 10)
	case d.PolicyID > 0:
		return "denied by policy " + strconv.FormatInt(d.PolicyID, 10)
	}
	return noPolicyGrants(access)
}

// noPolicyGrants is the default deny of access, as Verdict and
// Decision.Reason word it.
func noPolicyGrants(access string) string { return "no policy grants " + access }
