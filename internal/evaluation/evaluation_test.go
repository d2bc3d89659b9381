package evaluation

import (
	"encoding/json"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestErrorRatesAndDET(t *testing.T) {
	gen := []float64{0.9, 0.8, 0.7, 0.3}
	imp := []float64{0.1, 0.2, 0.35, 0.5}
	fr, fa := ErrorRates(gen, imp, 0.45)
	if fr != 0.25 || fa != 0.25 {
		t.Fatalf("at 0.45: FNMR %v FMR %v, want 0.25 0.25", fr, fa)
	}
	det := DET(gen, imp)
	for i := 1; i < len(det); i++ {
		if det[i].FalseAccept > det[i-1].FalseAccept || det[i].FalseReject < det[i-1].FalseReject {
			t.Fatalf("DET not monotone at %d: %+v after %+v", i, det[i], det[i-1])
		}
	}
	if last := det[len(det)-1]; last.FalseAccept != 0 || last.FalseReject != 1 {
		t.Fatalf("last point %+v, want everything rejected", last)
	}
	// Four impostor pairs cannot support FMR 25 % (the rule of three needs 12).
	if _, _, ok := RejectAtAccept(gen, imp, 0.25); ok {
		t.Fatal("FMR 25 % resolved from 4 impostor pairs")
	}
	imp12 := []float64{0.1, 0.1, 0.1, 0.1, 0.2, 0.2, 0.2, 0.2, 0.35, 0.35, 0.35, 0.5}
	// FMR ≤ 25 % needs a threshold above 0.35; the best FNMR there is 1/4 (0.3 is below).
	if fr, th, ok := RejectAtAccept(gen, imp12, 0.25); !ok || fr != 0.25 || th <= 0.35 {
		t.Fatalf("FNMR at FMR 25 %% = %v at %v (%v)", fr, th, ok)
	}
	if fr, _ := ErrorRates(nil, imp, 0.5); !math.IsNaN(fr) {
		t.Fatal("a rate over nothing is not NaN")
	}
}

func TestNumberJSON(t *testing.T) {
	b, err := json.Marshal(struct{ A, B, C Number }{Number(math.NaN()), Number(math.Inf(1)), 0.25})
	if err != nil || string(b) != `{"A":null,"B":null,"C":0.25}` {
		t.Fatalf("%s %v", b, err)
	}
	var back struct{ A, C Number }
	if err := json.Unmarshal(b, &back); err != nil || !math.IsNaN(float64(back.A)) || back.C != 0.25 {
		t.Fatalf("%+v %v", back, err)
	}
}

func TestFieldMatch(t *testing.T) {
	for _, c := range []struct {
		truth, got string
		want       bool
	}{
		{"NGUYỄN VĂN AN", "nguyễn  văn an", true},
		{"NGUYỄN VĂN AN", "NGUYEN VAN AN", false}, // diacritics are kept
		{"Phường 1, Quận 3, TP. Hồ Chí Minh", "Phường 1 ,Quận 3,  TP. Hồ Chí Minh", true},
		{"NGUYỄN VĂN AN", "NGUYE\u0302\u0303N VĂN AN", true}, // NFD input
		{"1999-03-15", "1999-03-16", false},
		{"VNM", "", false},
	} {
		if got := FieldMatch(c.truth, c.got); got != c.want {
			t.Errorf("FieldMatch(%q, %q) = %v", c.truth, c.got, got)
		}
	}
}

func testCorpus() *Corpus {
	return &Corpus{
		Documents: []Document{
			{ID: "d1", Split: HeldOut, Type: "chip_id_card", Images: map[string]string{"document_front": "d1f.jpg"},
				Fields: map[string]string{"id_number": "001099012345", "full_name": "MAI PHƯƠNG VY"}},
			{ID: "d2", Split: HeldOut, Type: "passport", Images: map[string]string{"passport": "d2.jpg"},
				Fields: map[string]string{"passport_number": "C1234567"}},
		},
		Captures: []Capture{{ID: "c1", Split: HeldOut, Kind: "document", Image: "c1.jpg", Expect: "blurry"}},
		Faces: []Face{
			{ID: "f1", Split: HeldOut, Identity: "p1", Image: "f1.jpg"},
			{ID: "f2", Split: HeldOut, Identity: "p2", Image: "f2.jpg"},
		},
		Sessions: []Session{
			{ID: "s1", Split: HeldOut, Kind: Genuine, Document: "d1", Selfie: "f1", Retakes: map[string]string{"document_front": "c1"}},
			{ID: "s2", Split: HeldOut, Kind: Impostor, Document: "d2", Selfie: "f2"},
		},
	}
}

func TestValidate(t *testing.T) {
	if err := testCorpus().Validate(); err != nil {
		t.Fatal(err)
	}
	c := testCorpus()
	c.Sessions[0].Selfie = "nope"
	c.Documents[1].Images["passport"] = "../../etc/passwd"
	c.Faces[1].Split = Calibration // s2 now mixes splits
	c.Captures[0].ID = "f1"        // duplicate id
	err := c.Validate()
	for _, want := range []string{`no face "nope"`, "not inside the corpus", "mixes splits", `id "f1" is used twice`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v, want %q", err, want)
		}
	}
}

func TestSaveLoad(t *testing.T) {
	c := testCorpus()
	c.Dir = t.TempDir()
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	got, err := Load(c.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Sessions) != 2 || got.Sessions[0].Retakes["document_front"] != "c1" {
		t.Fatalf("loaded %+v", got.Sessions)
	}
}

func TestSummarize(t *testing.T) {
	c := testCorpus()
	outcomes := []Outcome{
		{Session: c.Sessions[0], Status: "verified", ExtractedType: "chip_id_card",
			Fields: map[string]string{"id_number": "001099012345", "full_name": "MAI PHUONG VY"},
			Gate: []GateAnswer{
				{Kind: "document", Expect: "blurry", Status: "retake", Reasons: []string{"blurry"}},
				{Kind: "document", Expect: ExpectGood, Status: "accepted"},
				{Kind: "selfie", Expect: ExpectGood, Status: "retake", Reasons: []string{"glare"}},
				{Kind: "selfie", Expect: ExpectGood, Status: "pending"},
			}},
		{Session: c.Sessions[1], Status: "rejected", ExtractedType: "passport",
			Fields: map[string]string{"passport_number": "C1234567"},
			Gate: []GateAnswer{ // an impostor session: its good pictures are counted in their own genuine sessions
				{Kind: "document", Expect: ExpectGood, Status: "retake", Reasons: []string{"not_framed"}},
				{Kind: "selfie", Expect: ExpectAttack, Status: "retake", Reasons: []string{"no_face"}},
			}},
	}
	r := Summarize(c, HeldOut, outcomes, map[string]map[string]string{"d1": {"full_name": "MAI PHƯƠNG VY"}}, FaceScores{Genuine: []float64{0.8}, Impostor: []float64{0.1}, Threshold: 0.45},
		LivenessScores{BonaFide: []float64{0.9, 0.2}, Attacks: map[string][]float64{"print": {0.1, 0.7}}, Threshold: 0.5})
	if r.Sessions != 2 || *r.GoodRejected["selfie"] != (Rate{1, 1}) || *r.GoodRejected["document"] != (Rate{0, 1}) ||
		*r.BadCaught["blurry"] != (Rate{1, 1}) || r.Unanswered != (Rate{1, 6}) || len(r.BadCaught) != 1 {
		t.Fatalf("gate: %+v %+v", r.GoodRejected, r.BadCaught)
	}
	if *r.Fields["chip_id_card"]["full_name"] != (Rate{0, 1}) || *r.Fields["chip_id_card"]["id_number"] != (Rate{1, 1}) {
		t.Fatalf("fields: %+v", r.Fields["chip_id_card"])
	}
	if r.GenuineVerified != (Rate{1, 1}) || r.ImpostorsVerified != (Rate{0, 1}) {
		t.Fatalf("end to end: %+v %+v", r.GenuineVerified, r.ImpostorsVerified)
	}
	if r.Liveness.BPCER != 0.5 || r.Liveness.APCER != 0.5 {
		t.Fatalf("liveness: %+v", r.Liveness)
	}
	if *r.Baseline["chip_id_card"]["full_name"] != (Rate{1, 1}) || *r.Baseline["chip_id_card"]["id_number"] != (Rate{0, 1}) {
		t.Fatalf("baseline: %+v", r.Baseline["chip_id_card"])
	}
	var sb strings.Builder
	if err := r.WriteText(&sb); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"full_name", "0/1 (0.0 %)", "gate false rejection ≤ 2 %", "MISSED", "behind on 1 chip_id_card.full_name"} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, sb.String())
		}
	}
}

func TestPlots(t *testing.T) {
	dir := t.TempDir()
	det := filepath.Join(dir, "det.png")
	hist := filepath.Join(dir, "hist.png")
	if err := WriteDET(det, FaceScores{Genuine: []float64{0.9, 0.8, 0.4}, Impostor: []float64{0.1, 0.2, 0.5}, Threshold: 0.45}); err != nil {
		t.Fatal(err)
	}
	if err := WriteScoreHistogram(hist, LivenessScores{BonaFide: []float64{0.9, 0.95}, Attacks: map[string][]float64{"replay": {0.1}}, Threshold: 0.5}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{det, hist} {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil || img.Bounds().Dx() < 300 {
			t.Fatalf("%s: %v %v", p, err, img)
		}
	}
}

func TestBaselineFields(t *testing.T) {
	text := `CỘNG HÒA XÃ HỘI CHỦ NGHĨA VIỆT NAM
CĂN CƯỚC CÔNG DÂN
Số / No.: 001099012345
Họ và tên / Full name:
MAI PHƯƠNG VY
Ngày sinh / Date of birth: 15/03/1999
Giới tính / Sex: Nữ Quốc tịch / Nationality: Việt Nam
Quê quán / Place of origin:
Hà Nội
Có giá trị đến: 15/03/2039`
	got := baselineFields(text)
	want := map[string]string{
		"id_number": "001099012345", "full_name": "MAI PHƯƠNG VY", "date_of_birth": "1999-03-15",
		"sex": "F", "nationality": "VNM", "place_of_origin": "Hà Nội", "expiry_date": "2039-03-15",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

// TestSelfieLike: a photo stands for a selfie when the whole face is inside it with a margin
// and large enough for the service's framing; a thumbnail's face (64 px) or a crop that cuts
// the head is no selfie.
func TestSelfieLike(t *testing.T) {
	photo := func(w, h int, face image.Rectangle) FacePhoto {
		return FacePhoto{Image: image.NewGray(image.Rect(0, 0, w, h)), FaceBox: face}
	}
	for _, c := range []struct {
		name string
		p    FacePhoto
		want bool
	}{
		{"portrait", photo(640, 800, image.Rect(200, 150, 440, 420)), true},
		{"thumbnail", photo(210, 170, image.Rect(71, 20, 135, 84)), false},
		{"head cut by the top", photo(640, 800, image.Rect(200, 5, 440, 300)), false},
		{"no face", photo(640, 800, image.Rectangle{}), false},
	} {
		if got := selfieLike(c.p); got != c.want {
			t.Errorf("%s: selfie-like %v, want %v", c.name, got, c.want)
		}
	}
}
