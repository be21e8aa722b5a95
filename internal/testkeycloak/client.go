package testkeycloak

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Token is what the token endpoint answers.
type Token struct {
	AccessToken string `json:"access_token"`
	ExpiresIn   int    `json:"expires_in"`
	TokenType   string `json:"token_type"`
}

// PasswordToken asks realm's token endpoint for an access token with the
// resource owner password grant (the client must have direct access
// grants enabled and be public).
func (s *Server) PasswordToken(ctx context.Context, realm, clientID, user, password string) (*Token, error) {
	var tok Token
	err := s.postForm(ctx, s.Issuer(realm)+"/protocol/openid-connect/token", map[string]string{
		"grant_type": "password", "client_id": clientID, "username": user, "password": password, "scope": "openid",
	}, &tok)
	if err != nil {
		return nil, fmt.Errorf("testkeycloak: password grant for %s in realm %s (client %s): %w", user, realm, clientID, err)
	}
	if tok.AccessToken == "" {
		return nil, fmt.Errorf("testkeycloak: realm %s answered no access token for %s", realm, user)
	}
	return &tok, nil
}

// adminToken is a master-realm token of the bootstrap administrator,
// fetched again shortly before it expires.
func (s *Server) adminToken(ctx context.Context) (string, error) {
	s.mu.Lock()
	if s.adminTok != "" && time.Now().Before(s.adminExp) {
		t := s.adminTok
		s.mu.Unlock()
		return t, nil
	}
	s.mu.Unlock()
	tok, err := s.PasswordToken(ctx, "master", "admin-cli", AdminUser, s.adminPassword)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	s.adminTok, s.adminExp = tok.AccessToken, time.Now().Add(time.Duration(tok.ExpiresIn)*time.Second/2)
	s.mu.Unlock()
	return tok.AccessToken, nil
}

// CreateClient adds a client (a ClientRepresentation) to realm through
// the admin REST API.
func (s *Server) CreateClient(ctx context.Context, realm string, client map[string]any) error {
	tok, err := s.adminToken(ctx)
	if err != nil {
		return err
	}
	data, err := json.Marshal(client)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/admin/realms/"+url.PathEscape(realm)+"/clients", bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	if err := s.do(req, http.StatusCreated, nil); err != nil {
		return fmt.Errorf("testkeycloak: create client %v in realm %s: %w", client["clientId"], realm, err)
	}
	return nil
}

func (s *Server) do(req *http.Request, want int, out any) error {
	resp, err := s.httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %s: %s", req.Method, req.URL.Path, resp.Status, body)
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
		}
	}
	return nil
}

func urlEscape(s string) string { return url.QueryEscape(s) }
