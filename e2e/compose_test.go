package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/pgranger/pgranger/config"
)

// composeService is what the test reads of a docker-compose service.
type composeService struct {
	Image       string            `yaml:"image"`
	Build       any               `yaml:"build"`
	Command     []string          `yaml:"command"`
	Entrypoint  []string          `yaml:"entrypoint"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	Ports       []string          `yaml:"ports"`
	NetworkMode string            `yaml:"network_mode"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Healthcheck *struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
}

func readCompose(t *testing.T) map[string]composeService {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Services map[string]composeService `yaml:"services"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return doc.Services
}

// Docker cannot run where CI runs, so the compose file is checked for what
// can be checked without it: the services and their images, published
// ports, health checks and start order; the files it mounts exist; the
// pgranger configuration it runs loads with the environment it is given;
// the Keycloak realm has the users, roles and client mappers pgranger's
// token settings expect; the policies the bootstrap uploads are the demo
// bundle's.
func TestComposeFileIsValid(t *testing.T) {
	svcs := readCompose(t)
	var names []string
	for n := range svcs {
		names = append(names, n)
	}
	sort.Strings(names)
	if got, want := strings.Join(names, " "), "keycloak pgranger postgres ranger ranger-bootstrap ranger-db ranger-solr ranger-zk"; got != want {
		t.Fatalf("services = %s, want %s", got, want)
	}
	images := map[string]string{
		"postgres":         "postgres:16",
		"keycloak":         "quay.io/keycloak/keycloak:26.1",
		"ranger":           "apache/ranger:2.6.0",
		"ranger-db":        "apache/ranger-db:2.6.0",
		"ranger-zk":        "apache/ranger-zk:2.6.0",
		"ranger-solr":      "apache/ranger-solr:2.6.0",
		"ranger-bootstrap": "curlimages/curl:8.11.1",
	}
	for name, img := range images {
		if svcs[name].Image != img {
			t.Errorf("%s: image %q, want %q", name, svcs[name].Image, img)
		}
	}
	if svcs["pgranger"].Build != "." || svcs["pgranger"].Image != "" {
		t.Errorf("pgranger must be built from the Dockerfile: build %v, image %q", svcs["pgranger"].Build, svcs["pgranger"].Image)
	}

	ports := map[string][]string{
		"keycloak": {"127.0.0.1:8080:8080", "127.0.0.1:6432:6432", "127.0.0.1:9432:9432"},
		"ranger":   {"127.0.0.1:6080:6080"},
	}
	for _, name := range names {
		if !reflect.DeepEqual(svcs[name].Ports, ports[name]) {
			t.Errorf("%s: ports %v, want %v", name, svcs[name].Ports, ports[name])
		}
	}
	if svcs["pgranger"].NetworkMode != "service:keycloak" {
		t.Errorf("pgranger network_mode = %q: it must share Keycloak's namespace to reach the issuer over loopback", svcs["pgranger"].NetworkMode)
	}

	health := map[string]string{
		"postgres":  "pg_isready",
		"keycloak":  "/health/ready",
		"ranger-db": "pg_isready",
		"ranger":    "http://localhost:6080/login.jsp",
		"pgranger":  "http://127.0.0.1:9432/readyz",
	}
	for _, name := range names {
		hc := svcs[name].Healthcheck
		want, needs := health[name]
		switch {
		case !needs && hc != nil:
			t.Errorf("%s: unexpected health check %v", name, hc.Test)
		case needs && (hc == nil || !strings.Contains(strings.Join(hc.Test, " "), want)):
			t.Errorf("%s: health check %v, want one using %s", name, hc, want)
		}
	}
	deps := map[string]map[string]string{
		"ranger":           {"ranger-db": "service_healthy", "ranger-zk": "service_started", "ranger-solr": "service_started"},
		"ranger-bootstrap": {"ranger": "service_healthy"},
		"pgranger":         {"postgres": "service_healthy", "keycloak": "service_healthy", "ranger-bootstrap": "service_completed_successfully"},
	}
	for _, name := range names {
		got := map[string]string{}
		for dep, d := range svcs[name].DependsOn {
			got[dep] = d.Condition
			if _, ok := svcs[dep]; !ok {
				t.Errorf("%s depends on %s, which is not a service", name, dep)
			}
		}
		want := deps[name]
		if want == nil {
			want = map[string]string{}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: depends_on %v, want %v", name, got, want)
		}
	}

	for _, name := range names {
		for _, v := range svcs[name].Volumes {
			src, _, _ := strings.Cut(v, ":")
			if _, err := os.Stat(filepath.Join(repoRoot, src)); err != nil {
				t.Errorf("service %q mounts %s, which does not exist", name, src)
			}
		}
	}
	for _, f := range []string{"Dockerfile", "deploy/ranger/bootstrap.sh", "deploy/ranger/service.json"} {
		if _, err := os.Stat(filepath.Join(repoRoot, f)); err != nil {
			t.Errorf("%s is missing", f)
		}
	}

	// The pgranger configuration the container runs, with its environment.
	pg := svcs["pgranger"]
	if got := strings.Join(pg.Command, " "); got != "serve --config /etc/pgranger/demo.toml" {
		t.Errorf("pgranger command = %q", got)
	}
	var env []string
	for k, v := range pg.Environment {
		env = append(env, k+"="+v)
	}
	cfg, err := config.Load(filepath.Join(repoRoot, "deploy/pgranger/pgranger.toml"), env)
	if err != nil {
		t.Fatalf("deploy/pgranger/pgranger.toml with the compose environment: %v", err)
	}
	if cfg.Policy.Source != "ranger" || cfg.Policy.Ranger.URL != "http://ranger:6080" || cfg.Policy.ServiceName != "demo_hive" ||
		cfg.Policy.Ranger.AdminPassword != svcs["ranger-bootstrap"].Environment["RANGER_ADMIN_PASSWORD"] {
		t.Errorf("pgranger does not download the service the bootstrap creates: %+v", cfg.Policy)
	}
	if !cfg.Identity.Mode.Has("jwt") || cfg.Identity.JWT.Issuer != svcs["keycloak"].Environment["KC_HOSTNAME"]+"/realms/pgranger" {
		t.Errorf("issuer %q does not match Keycloak's KC_HOSTNAME %q", cfg.Identity.JWT.Issuer, svcs["keycloak"].Environment["KC_HOSTNAME"])
	}
	if cfg.Backend.DSN != "postgres://pgranger_svc:pgranger_svc@postgres:5432/demo?sslmode=disable" {
		t.Errorf("backend.dsn = %q", cfg.Backend.DSN)
	}
	checkRealm(t, cfg)
	checkBootstrapPolicies(t)
	checkDockerfile(t)
}

// checkRealm: users alice, bob and carol with their roles, groups and
// region; client "pgranger" whose tokens carry the audience, realm and
// client roles, groups and region where pgranger's identity.jwt settings
// read them. (e2e/keycloak_test.go imports this realm into a real Keycloak
// and logs in with its tokens.)
func checkRealm(t *testing.T, cfg *config.Config) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "deploy/keycloak/pgranger-realm.json"))
	if err != nil {
		t.Fatal(err)
	}
	var realm struct {
		Realm string `json:"realm"`
		Roles struct {
			Realm []struct {
				Name string `json:"name"`
			} `json:"realm"`
		} `json:"roles"`
		Users []struct {
			Username    string              `json:"username"`
			RealmRoles  []string            `json:"realmRoles"`
			ClientRoles map[string][]string `json:"clientRoles"`
			Groups      []string            `json:"groups"`
			Attributes  map[string][]string `json:"attributes"`
			Credentials []struct {
				Value string `json:"value"`
			} `json:"credentials"`
		} `json:"users"`
		Clients []struct {
			ClientID                  string `json:"clientId"`
			DirectAccessGrantsEnabled bool   `json:"directAccessGrantsEnabled"`
			ProtocolMappers           []struct {
				ProtocolMapper string            `json:"protocolMapper"`
				Config         map[string]string `json:"config"`
			} `json:"protocolMappers"`
		} `json:"clients"`
	}
	if err := json.Unmarshal(data, &realm); err != nil {
		t.Fatalf("realm: %v", err)
	}
	if realm.Realm != "pgranger" {
		t.Errorf("realm %q", realm.Realm)
	}
	var roles []string
	for _, r := range realm.Roles.Realm {
		roles = append(roles, r.Name)
	}
	if got := strings.Join(roles, " "); got != "auditor analyst support" {
		t.Errorf("realm roles = %s", got)
	}
	var users []string
	for _, u := range realm.Users {
		pw := ""
		if len(u.Credentials) == 1 {
			pw = u.Credentials[0].Value
		}
		users = append(users, u.Username+":"+pw+":"+strings.Join(u.RealmRoles, ",")+":"+strings.Join(u.ClientRoles["pgranger"], ",")+":"+strings.Join(u.Groups, ",")+":"+strings.Join(u.Attributes["region"], ","))
	}
	equalLines(t, "realm users", users, []string{
		"alice:alice:auditor::/compliance:",
		"bob:bob:analyst:pii-reader:/analysts:US",
		"carol:carol:support::/support:EU",
	})
	if len(realm.Clients) != 1 || realm.Clients[0].ClientID != cfg.Identity.JWT.Audience || !realm.Clients[0].DirectAccessGrantsEnabled {
		t.Fatalf("want one client %q with direct access grants: %+v", cfg.Identity.JWT.Audience, realm.Clients)
	}
	claims := map[string]string{}
	for _, m := range realm.Clients[0].ProtocolMappers {
		switch m.ProtocolMapper {
		case "oidc-audience-mapper":
			claims["aud"] = m.Config["included.client.audience"]
		case "oidc-usermodel-realm-role-mapper":
			claims["roles"] = m.Config["claim.name"] + claims["roles"]
		case "oidc-usermodel-client-role-mapper":
			claims["roles"] += "," + strings.ReplaceAll(m.Config["claim.name"], "${client_id}", m.Config["usermodel.clientRoleMapping.clientId"])
		case "oidc-group-membership-mapper":
			claims["groups"] = m.Config["claim.name"]
			if m.Config["full.path"] != "false" {
				t.Errorf("group mapper must give bare names (full.path false), the names Ranger policies use")
			}
		case "oidc-usermodel-attribute-mapper":
			claims["attr:"+m.Config["user.attribute"]] = m.Config["claim.name"]
		}
		if m.Config["access.token.claim"] != "true" {
			t.Errorf("mapper %s does not write the access token", m.ProtocolMapper)
		}
	}
	want := map[string]string{
		"aud":         cfg.Identity.JWT.Audience,
		"roles":       strings.Join(cfg.Identity.JWT.RolesClaim, ","),
		"groups":      strings.Join(cfg.Identity.JWT.GroupsClaim, ","),
		"attr:region": cfg.Identity.JWT.AttributeClaims["region"],
	}
	if !reflect.DeepEqual(claims, want) {
		t.Errorf("client mappers write %v, pgranger reads %v", claims, want)
	}
}

// checkBootstrapPolicies: deploy/ranger/policies holds the demo bundle's
// policies, one per file, as Ranger's public API takes them (no id, the
// service named).
func checkBootstrapPolicies(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot, "examples/policies/hive.json"))
	if err != nil {
		t.Fatal(err)
	}
	var bundle struct {
		Policies []map[string]any `json:"policies"`
	}
	if err := json.Unmarshal(doc, &bundle); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(repoRoot, "deploy/ranger/policies/*.json"))
	if len(files) != len(bundle.Policies) {
		t.Fatalf("%d policy files for %d policies in the demo bundle", len(files), len(bundle.Policies))
	}
	byName := map[string]map[string]any{}
	fileOf := map[string]string{}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		var p map[string]any
		if err := json.Unmarshal(data, &p); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if p["service"] != "demo_hive" {
			t.Errorf("%s: service %v", f, p["service"])
		}
		if _, ok := p["id"]; ok {
			t.Errorf("%s: carries an id; Ranger assigns them", f)
		}
		byName[p["name"].(string)] = p
		fileOf[p["name"].(string)] = filepath.Base(f)
	}
	slug := regexp.MustCompile(`[^a-z0-9]+`)
	for _, want := range bundle.Policies {
		name := want["name"].(string)
		got := byName[name]
		if got == nil {
			t.Errorf("policy %q is not uploaded", name)
			continue
		}
		for k, v := range want {
			switch k {
			case "id", "guid", "version", "createTime", "updateTime", "createdBy", "updatedBy", "resourceSignature", "serviceType", "service":
				continue
			}
			if !reflect.DeepEqual(got[k], v) {
				t.Errorf("policy %q: %s differs from the demo bundle", name, k)
			}
		}
		base := strings.Trim(slug.ReplaceAllString(strings.ToLower(name), "-"), "-")
		if !strings.HasSuffix(fileOf[name], "-"+base+".json") {
			t.Errorf("policy %q is not in a file named after it", name)
		}
	}
}

// checkDockerfile: a cgo build stage and a runtime stage that runs as a
// user other than root.
func checkDockerfile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var froms, users []string
	cgo := false
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "FROM":
			froms = append(froms, f[1])
		case "USER":
			users = append(users, f[1])
		case "RUN":
			cgo = cgo || strings.Contains(line, "CGO_ENABLED=1")
		}
	}
	if len(froms) != 2 || !strings.HasPrefix(froms[0], "golang:") || !strings.HasPrefix(froms[1], "gcr.io/distroless/") {
		t.Errorf("stages %v: want a golang build stage and a distroless runtime", froms)
	}
	if len(users) != 1 || strings.HasPrefix(users[0], "root") || users[0] == "0" {
		t.Errorf("USER %v: the runtime must not be root", users)
	}
	if !cgo {
		t.Error("the build stage must build with CGO_ENABLED=1 (pg_query)")
	}
}
