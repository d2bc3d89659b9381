//go:build docgeneval

package ocr

// A test-only helper, built with -tags docgeneval: reads documents of internal/docgen (an
// independent renderer) through the group's read path and prints per-field exact matches.
// DOCGEN_SPLIT=calibration|held_out (default calibration), DOCGEN_N documents per type
// (default 4), DOCGEN_PHOTO=1 reads phone captures instead of the flat renders,
// DOCGEN_TYPES a comma-separated subset of types. It asserts nothing: the figures are for
// tuning (calibration) and reporting (held_out); idstream eval is the evaluation.

import (
	"fmt"
	"image/png"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idstream/idstream/internal/docgen"
	"github.com/idstream/idstream/internal/docread"
)

func TestDocgenEval(t *testing.T) {
	reader, err := docread.New(docread.Config{MRZModelDir: "../../models", PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	g := &group{reader: reader}
	rd, err := docgen.NewRenderer(docgen.DefaultFontDir)
	if err != nil {
		t.Fatal(err)
	}
	split := docgen.Calibration
	if os.Getenv("DOCGEN_SPLIT") == "held_out" {
		split = docgen.HeldOut
	}
	n := 4
	if v, err := strconv.Atoi(os.Getenv("DOCGEN_N")); err == nil {
		n = v
	}
	photo := os.Getenv("DOCGEN_PHOTO") == "1"
	types := docgen.DocumentTypes()
	if v := os.Getenv("DOCGEN_TYPES"); v != "" {
		types = strings.Split(v, ",")
	}
	verbose := os.Getenv("DOCGEN_VERBOSE") == "1"
	ref := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	type tally struct{ right, total int }
	perField := map[string]*tally{}
	typeRight, typeTotal, mrzRight, mrzTotal := 0, 0, 0, 0
	for _, typ := range types {
		for i := 0; i < n; i++ {
			r := rand.New(rand.NewPCG(uint64(1000+i), uint64(split)*7+11))
			p := docgen.NewPerson(r, ref)
			doc, err := rd.Render(p, typ, split, r, nil)
			if err != nil {
				t.Fatal(err)
			}
			steps := make([]string, 0, len(doc.Sides))
			for s := range doc.Sides {
				steps = append(steps, s)
			}
			sort.Strings(steps)
			for _, step := range steps {
				img := doc.Sides[step]
				if photo {
					img = docgen.Photograph(img, split, r).Image
				}
				var rd *reading
				switch step {
				case docgen.StepFront:
					rd, err = g.readFront(img)
				case docgen.StepBack:
					rd, err = g.readZoneSide(img, SideBack)
				default:
					rd, err = g.readZoneSide(img, SidePassport)
				}
				if err != nil {
					t.Fatal(err)
				}
				typeTotal++
				if rd.det.Type == doc.Type {
					typeRight++
				} else {
					t.Logf("%s %s %d %s: type %q, want %q", doc.Template, step, i, split, rd.det.Type, doc.Type)
					if dir := os.Getenv("DOCGEN_DUMP"); dir != "" && split == docgen.Calibration {
						f, _ := os.Create(fmt.Sprintf("%s/%s_%s_%d.png", dir, doc.Template, step, i))
						_ = png.Encode(f, img)
						f.Close()
					}
				}
				if doc.MRZSide == step {
					mrzTotal++
					if rd.zone != nil && fmt.Sprint(rd.zone.Lines) == fmt.Sprint(doc.MRZ) {
						mrzRight++
					} else {
						var got []string
						if rd.zone != nil {
							got = rd.zone.Lines
						}
						t.Logf("%s %s %d: MRZ %q, want %q", doc.Template, step, i, got, doc.MRZ)
						if dir := os.Getenv("DOCGEN_DUMP"); dir != "" && split == docgen.Calibration {
							f, _ := os.Create(fmt.Sprintf("%s/mrz_%s_%s_%d.png", dir, doc.Template, step, i))
							_ = png.Encode(f, img)
							f.Close()
						}
					}
				}
				for name, want := range doc.Fields {
					if doc.FieldSides[name] != step {
						continue
					}
					key := doc.Type + "." + name
					if perField[key] == nil {
						perField[key] = &tally{}
					}
					perField[key].total++
					got := ""
					for _, f := range rd.fields {
						if f.Name == name && f.Valid {
							got = f.Value
						}
					}
					if name == "id_number" && got == "" && rd.zone != nil {
						got, _ = rd.zone.VietnameseIDNumber()
					}
					if strings.Join(strings.Fields(got), " ") == want {
						perField[key].right++
					} else {
						raw := ""
						for _, f := range rd.fields {
							if f.Name == name {
								raw = f.Raw
							}
						}
						t.Logf("%s %s %d %s: got %q (raw %q), want %q", doc.Template, step, i, name, got, raw, want)
						if dir := os.Getenv("DOCGEN_DUMP"); dir != "" && split == docgen.Calibration {
							f, err := os.Create(fmt.Sprintf("%s/field_%s_%s_%d_%s.png", dir, doc.Template, step, i, name))
							if err != nil {
								t.Fatal(err)
							}
							_ = png.Encode(f, img)
							f.Close()
						}
					}
				}
				if verbose {
					t.Logf("%s %s %d fields %+v", doc.Template, step, i, rd.fields)
				}
			}
		}
	}
	keys := make([]string, 0, len(perField))
	for k := range perField {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	right, total := 0, 0
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-40s %3d/%3d\n", k, perField[k].right, perField[k].total)
		right += perField[k].right
		total += perField[k].total
	}
	t.Logf("docgen %s photo=%v: type %d/%d, MRZ %d/%d, fields %d/%d\n%s", split, photo, typeRight, typeTotal, mrzRight, mrzTotal, right, total, b.String())
}
