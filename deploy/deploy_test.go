package deploy

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
)

// baseImagePackages are the library packages debian:bookworm-slim holds already (apt needs
// them).
var baseImagePackages = []string{"libc6", "libgcc-s1", "libstdc++6"}

// runtimeStage returns the packages the Dockerfile's last stage installs and its lines.
func runtimeStage(t *testing.T) (packages []string, lines []string) {
	t.Helper()
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	stage := text[strings.LastIndex(text, "\nFROM "):]
	joined := strings.ReplaceAll(stage, "\\\n", " ")
	for _, line := range strings.Split(joined, "\n") {
		lines = append(lines, strings.TrimSpace(line))
		if i := strings.Index(line, "apt-get install"); i >= 0 {
			cmd := line[i:]
			if j := strings.Index(cmd, "&&"); j >= 0 {
				cmd = cmd[:j]
			}
			for _, f := range strings.Fields(cmd)[2:] {
				if !strings.HasPrefix(f, "-") {
					packages = append(packages, f)
				}
			}
		}
	}
	if len(packages) == 0 {
		t.Fatal("the runtime stage installs no package")
	}
	return packages, lines
}

// TestRuntimeImageLibraries builds the binary as the Dockerfile does and checks that every
// shared library it needs (readelf's NEEDED entries) belongs to a Debian package the runtime
// stage installs or the base image holds (dpkg -S): a container does not fail with "error
// while loading shared libraries". The packages' own dependencies come with them through
// apt. The machine must be Debian 12, as the image is.
func TestRuntimeImageLibraries(t *testing.T) {
	for _, tool := range []string{"readelf", "dpkg", "ldconfig", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	installed, _ := runtimeStage(t)
	bin := filepath.Join(t.TempDir(), "idstream")
	build := exec.Command("go", "build", "-o", bin, "./cmd/idstream")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	needed := neededLibraries(t, bin)
	if len(needed) < 5 {
		t.Fatalf("readelf found %d NEEDED entries (%v): not the cgo binary expected", len(needed), needed)
	}
	paths := libraryPaths(t)
	for _, lib := range needed {
		path, ok := paths[lib]
		if !ok {
			t.Errorf("%s: not in ldconfig's cache", lib)
			continue
		}
		pkg := owningPackage(t, path)
		if !slices.Contains(installed, pkg) && !slices.Contains(baseImagePackages, pkg) {
			t.Errorf("%s comes from %s, which the runtime stage does not install", lib, pkg)
		}
	}
	// The files the service opens or runs, by package: Tesseract's text models (docread's
	// TextLanguage "vie" and CodeLanguage "eng") and the JPEG 2000 decoder of chip photos.
	for _, pkg := range []string{"tesseract-ocr-vie", "tesseract-ocr-eng", "libopenjp2-tools", "ca-certificates"} {
		if !slices.Contains(installed, pkg) {
			t.Errorf("the runtime stage does not install %s", pkg)
		}
	}
}

// TestRuntimeImageLayout: the models are copied where IDSTREAM_MODELS_DIR points, the data
// dir exists and belongs to the user the image runs as.
func TestRuntimeImageLayout(t *testing.T) {
	_, lines := runtimeStage(t)
	stage := strings.Join(lines, "\n")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`COPY --from=build /src/models /opt/idstream/models`),
		regexp.MustCompile(`IDSTREAM_MODELS_DIR=/opt/idstream/models`),
		regexp.MustCompile(`IDSTREAM_DATA_DIR=/var/lib/idstream`),
		regexp.MustCompile(`mkdir -p /var/lib/idstream && chown 65532:65532 /var/lib/idstream`),
		regexp.MustCompile(`(?m)^USER 65532:65532$`),
		regexp.MustCompile(`OMP_THREAD_LIMIT=1`),
	} {
		if !want.MatchString(stage) {
			t.Errorf("the runtime stage lacks %s", want)
		}
	}
	ignore, err := os.ReadFile("../.dockerignore")
	if err != nil {
		t.Fatalf(".dockerignore: %v", err)
	}
	for _, entry := range []string{".data", "bin", "models/*", ".git"} {
		if !slices.Contains(strings.Split(string(ignore), "\n"), entry) {
			t.Errorf(".dockerignore does not leave out %s", entry)
		}
	}
}

// neededLibraries returns the NEEDED entries of the ELF file bin.
func neededLibraries(t *testing.T, bin string) []string {
	t.Helper()
	out, err := exec.Command("readelf", "-d", bin).Output()
	if err != nil {
		t.Fatalf("readelf: %v", err)
	}
	re := regexp.MustCompile(`\(NEEDED\)\s+Shared library: \[([^\]]+)\]`)
	var libs []string
	for _, m := range re.FindAllStringSubmatch(string(out), -1) {
		libs = append(libs, m[1])
	}
	return libs
}

// libraryPaths maps each x86-64 library name in ldconfig's cache to its path.
func libraryPaths(t *testing.T) map[string]string {
	t.Helper()
	out, err := exec.Command("ldconfig", "-p").Output()
	if err != nil {
		t.Fatalf("ldconfig -p: %v", err)
	}
	paths := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		name, rest, ok := strings.Cut(strings.TrimSpace(sc.Text()), " (")
		_, path, found := strings.Cut(rest, "=> ")
		if ok && found && !strings.Contains(rest, "32") {
			if _, seen := paths[name]; !seen {
				paths[name] = path
			}
		}
	}
	return paths
}

// owningPackage returns the Debian package that installed path (its symlinks resolved).
func owningPackage(t *testing.T, path string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, p := range []string{real, path, strings.Replace(real, "/lib/", "/usr/lib/", 1)} {
		out, err := exec.Command("dpkg", "-S", p).Output()
		if err == nil {
			pkg, _, _ := strings.Cut(strings.TrimSpace(string(out)), ":")
			return pkg
		}
	}
	t.Fatalf("dpkg -S %s: no package owns it", real)
	return ""
}

// TestComposeFile loads docker-compose.yml with compose-go (schema validation, the YAML
// anchors and the variables resolved as docker compose does) and checks what makes it run:
// the secrets it requires, jobs that wait for their servers and retry, health checks, and an
// instance id of its own for every replica of a stateful group.
func TestComposeFile(t *testing.T) {
	ctx := context.Background()
	load := func(env ...string) (*types.Project, error) {
		opts, err := cli.NewProjectOptions([]string{"../docker-compose.yml"},
			cli.WithName("idstream"), cli.WithWorkingDirectory(".."), cli.WithEnv(env))
		if err != nil {
			return nil, err
		}
		return opts.LoadProject(ctx)
	}
	if _, err := load(); err == nil || !strings.Contains(err.Error(), "IDSTREAM_TOKEN_SECRET") {
		t.Fatalf("loaded without IDSTREAM_TOKEN_SECRET: %v", err)
	}
	p, err := load("IDSTREAM_TOKEN_SECRET=0123456789abcdef", "CLICKHOUSE_PASSWORD=pw", "S3_ACCESS_KEY=a", "S3_SECRET_KEY=s")
	if err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	for _, s := range p.Services {
		job := s.Name == "topics" || s.Name == "migrate" || s.Name == "s3" // versitygw's image has no client to probe with
		if hc := s.HealthCheck; !job && (hc == nil || hc.Disable || len(hc.Test) == 0) {
			t.Errorf("%s has no health check", s.Name)
		}
		if len(s.Command) > 0 && (s.Command[0] == "process" || s.Command[0] == "sink" || s.Command[0] == "edge") &&
			(s.Environment["IDSTREAM_METRICS_ADDR"] == nil || !strings.HasSuffix(*s.Environment["IDSTREAM_METRICS_ADDR"], ":9464")) {
			t.Errorf("%s serves no /metrics on :9464, where deploy/prometheus/prometheus.yml scrapes", s.Name)
		}
	}
	for job, server := range map[string]string{"topics": "redpanda", "migrate": "clickhouse"} {
		s, err := p.GetService(job)
		if err != nil {
			t.Fatal(err)
		}
		if s.Restart != "on-failure" {
			t.Errorf("%s restart %q: a job that fails must run again", job, s.Restart)
		}
		if d, ok := s.DependsOn[server]; !ok || d.Condition != types.ServiceConditionHealthy {
			t.Errorf("%s does not wait for %s to be healthy: %+v", job, server, s.DependsOn)
		}
	}
	for _, s := range p.Services {
		pw := s.Environment["IDSTREAM_CLICKHOUSE_PASSWORD"]
		needs := s.Name == "migrate" || s.Name == "sink-clickhouse"
		if needs != (pw != nil && *pw == "pw") {
			t.Errorf("%s: has the ClickHouse password %v, needs it %v (only migrate and the ClickHouse sink do)", s.Name, pw != nil, needs)
		}
	}
	ids := map[string]string{}
	for _, s := range p.Services {
		if len(s.Command) < 2 || s.Command[0] != "process" {
			continue
		}
		if v := s.Environment["IDSTREAM_BLOB_STORE"]; v == nil || !strings.HasPrefix(*v, "s3://") {
			t.Errorf("%s: uploads not on the S3 store: a second host would not see them", s.Name)
		}
		group := s.Command[1]
		if group != "session" && group != "decision" && group != "erasure" {
			continue
		}
		i := slices.Index(s.Command, "--instance-id")
		if i < 0 || i+1 >= len(s.Command) {
			t.Errorf("%s (stateful %s) has no --instance-id: a recreated container would not fence its predecessor", s.Name, group)
			continue
		}
		if other, dup := ids[s.Command[i+1]]; dup {
			t.Errorf("%s and %s share the instance id %s", s.Name, other, s.Command[i+1])
		}
		ids[s.Command[i+1]] = s.Name
	}
	if len(ids) != 3 {
		t.Errorf("stateful replicas with instance ids: %v, want session, decision and erasure", ids)
	}
}
