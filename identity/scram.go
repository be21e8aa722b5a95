package identity

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/xdg-go/scram"
)

// SCRAMMechanism is the SASL mechanism name clients are offered.
const SCRAMMechanism = "SCRAM-SHA-256"

// scramIterations matches PostgreSQL's default (scram_iterations = 4096).
const scramIterations = 4096

type scramCredentials = scram.StoredCredentials

// credentialsFor turns a configured password into SCRAM stored credentials.
// A value in PostgreSQL's verifier form (what pg_authid.rolpassword holds,
// "SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey>") is used as it is, so
// operators never need to keep plain passwords in the file.
func credentialsFor(password string) (scramCredentials, error) {
	if strings.HasPrefix(password, "SCRAM-SHA-256$") {
		return parseVerifier(password)
	}
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return scramCredentials{}, err
	}
	client, err := scram.SHA256.NewClient("", password, "")
	if err != nil {
		return scramCredentials{}, fmt.Errorf("password: %w", err)
	}
	return client.GetStoredCredentialsWithError(scram.KeyFactors{Salt: string(salt), Iters: scramIterations})
}

func parseVerifier(v string) (scramCredentials, error) {
	bad := errors.New(`password: malformed SCRAM-SHA-256 verifier (want "SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>")`)
	parts := strings.Split(strings.TrimPrefix(v, "SCRAM-SHA-256$"), "$")
	if len(parts) != 2 {
		return scramCredentials{}, bad
	}
	iterSalt := strings.SplitN(parts[0], ":", 2)
	keys := strings.SplitN(parts[1], ":", 2)
	if len(iterSalt) != 2 || len(keys) != 2 {
		return scramCredentials{}, bad
	}
	iters, err := strconv.Atoi(iterSalt[0])
	if err != nil || iters <= 0 {
		return scramCredentials{}, bad
	}
	salt, err1 := base64.StdEncoding.DecodeString(iterSalt[1])
	stored, err2 := base64.StdEncoding.DecodeString(keys[0])
	server, err3 := base64.StdEncoding.DecodeString(keys[1])
	if err1 != nil || err2 != nil || err3 != nil || len(stored) != sha256.Size || len(server) != sha256.Size {
		return scramCredentials{}, bad
	}
	return scramCredentials{
		KeyFactors: scram.KeyFactors{Salt: string(salt), Iters: iters},
		StoredKey:  stored,
		ServerKey:  server,
	}, nil
}

// mockSalter gives unknown users a stable fake salt, so an exchange for a
// user that does not exist looks like one for a user who does and fails only
// at the proof, as PostgreSQL's mock authentication does.
type mockSalter struct{ secret []byte }

func newMockSalter() mockSalter {
	s := make([]byte, 32)
	if _, err := rand.Read(s); err != nil {
		panic(err)
	}
	return mockSalter{secret: s}
}

func (m mockSalter) credentials(user string) scramCredentials {
	mac := hmac.New(sha256.New, m.secret)
	mac.Write([]byte(user))
	sum := mac.Sum(nil)
	// StoredKey/ServerKey are random bytes no client proof can match.
	return scramCredentials{
		KeyFactors: scram.KeyFactors{Salt: string(sum[:16]), Iters: scramIterations},
		StoredKey:  sum,
		ServerKey:  sum,
	}
}

// SCRAMConversation is one server-side SCRAM-SHA-256 exchange for the user
// named in the startup message. The user name inside the SCRAM messages is
// ignored (libpq sends it empty), as PostgreSQL does.
type SCRAMConversation struct {
	user  *staticUser
	known bool
	conv  *scram.ServerConversation
}

// BeginSCRAM starts an exchange for startupUser.
func (a *Authenticator) BeginSCRAM(startupUser string) (*SCRAMConversation, error) {
	u, known := a.lookup(startupUser)
	creds := a.mock.credentials(startupUser)
	if known {
		creds = u.creds
	}
	srv, err := scram.SHA256.NewServer(func(string) (scram.StoredCredentials, error) { return creds, nil })
	if err != nil {
		return nil, err
	}
	return &SCRAMConversation{user: u, known: known, conv: srv.NewConversation()}, nil
}

// Step consumes a client message and returns the server's reply. An error
// means authentication failed; the caller reports ErrAuthFailed and nothing else.
func (c *SCRAMConversation) Step(clientMsg []byte) ([]byte, error) {
	out, err := c.conv.Step(string(clientMsg))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrAuthFailed, err)
	}
	return []byte(out), nil
}

// Done reports whether the exchange has finished.
func (c *SCRAMConversation) Done() bool { return c.conv.Done() }

// Identity returns the authenticated identity once the exchange finished
// with a valid proof from a configured user.
func (c *SCRAMConversation) Identity() (*Identity, error) {
	if !c.conv.Done() || !c.conv.Valid() || !c.known {
		return nil, ErrAuthFailed
	}
	id := c.user.id
	return &id, nil
}
