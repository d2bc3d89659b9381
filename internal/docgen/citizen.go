package docgen

import (
	"image/color"
	"math"
	"strings"
	"time"
)

// Dimensions of an ID-1 card (ISO/IEC 7810) in millimetres.
const (
	id1W = 85.6
	id1H = 54.0
)

var (
	ink      = rgb(28, 28, 32)
	titleRed = rgb(206, 32, 41)
	white    = rgb(255, 255, 255)
)

// The national motto block: Vietnamese, and with its English version under it.
var (
	mottoVN        = []string{"CỘNG HÒA XÃ HỘI CHỦ NGHĨA VIỆT NAM", "Độc lập - Tự do - Hạnh phúc"}
	mottoBilingual = []string{"CỘNG HÒA XÃ HỘI CHỦ NGHĨA VIỆT NAM", "Độc lập - Tự do - Hạnh phúc",
		"SOCIALIST REPUBLIC OF VIET NAM", "Independence - Freedom - Happiness"}
)

func sexVN(s string) string {
	if s == Female {
		return "Nữ"
	}
	return "Nam"
}

// lines draws text lines from baseline y with spacing dy; it returns the baseline after them.
func (c *canvas) lines(x, y, dy float64, ls []string, st textStyle) float64 {
	for _, l := range ls {
		c.text(x, y, l, st)
		y += dy
	}
	return y
}

// wrapFit wraps s into at most n lines (first line first mm, others rest mm), shrinking the
// style when it does not fit.
func (c *canvas) wrapFit(s string, st textStyle, first, rest float64, n int) ([]string, textStyle) {
	for {
		ls := c.wrap(s, st, first, rest)
		fits := len(ls) <= n
		for i, l := range ls {
			if limit := map[bool]float64{true: first, false: rest}[i == 0]; c.width(l, st) > limit {
				fits = false // a single word wider than its line
			}
		}
		if fits || st.size < 1 {
			return ls, st
		}
		st.size *= 0.94
	}
}

// header draws the national motto block centred on cx, lines from baseline y; it returns the
// baseline after it.
func (c *canvas) header(cx, y float64, lines []string, sts []textStyle, dy float64) float64 {
	for i, l := range lines {
		st := sts[min(i, len(sts)-1)]
		c.textCentered(cx, y, l, c.fitText(l, st, 2*cx-2)) // never wider than the card
		y += dy
	}
	return y
}

// palette is a template's background: a gradient between base and base2 under the
// security print's lines in ink.
type palette struct{ base, base2, ink color.RGBA }

// cardSide starts a card side with the template's tint.
func (g *gen) cardSide(pal palette) *canvas {
	c := g.canvas(id1W, id1H)
	g.background(c, id1W, id1H, pal)
	return c
}

// background paints a side's tint (only its base colour in plain test renderings).
func (g *gen) background(c *canvas, w, h float64, pal palette) {
	if g.plain {
		c.rect(0, 0, w, h, pal.base)
		return
	}
	c.tint(g.tint, 0, 0, w, h, pal.base, pal.base2, pal.ink, g.r)
}

// mrzBand draws the machine readable zone at the bottom of a card or page side: a white
// band (white) or the card's tint, lines at the ICAO pitch.
func (g *gen) mrzBand(c *canvas, lines []string, x, top, w, h, lineW float64, white bool) {
	if white {
		c.rect(0, top, w, h, rgb(252, 252, 250))
	}
	dy := math.Min((h-1.0)/float64(len(lines)), 4.4)
	if len(lines) == 2 {
		top += h - 1.0 - 2*dy
	}
	st := g.st(g.mrzFont, false, 3, rgb(15, 15, 18))
	st.personal = true
	c.mrzZone(lines, st, x, top+dy*0.85+0.3, dy, lineW)
}

// ---------------------------------------------------------------------------------------
// Chip citizen identity card, 2021 ("CĂN CƯỚC CÔNG DÂN" with chip).
//
// Follows the card issued from 2021 under Circular 06/2021/TT-BCA. Front: emblem top left,
// the bilingual national motto centred, the QR code top right, the red title "CĂN CƯỚC CÔNG
// DÂN" with "Citizen Identity Card" under it, the portrait on the left with "Có giá trị đến /
// Date of expiry" under it, and on the right bilingual labels: "Số / No." with the 12-digit
// number, "Họ và tên / Full name:" with the name on the next line, date of birth, sex and
// nationality on one line, place of origin on the next line, place of residence wrapping
// onto two lines. Back: the chip's contact pad, "Đặc điểm nhân dạng / Personal
// identification", "Ngày, tháng, năm / Date, month, year:" with the issue date, the issuer's
// title (Director General of the Police Department for Administrative Management of Social
// Order), signature and seal, two fingerprint boxes, and the TD1 MRZ at the bottom.
//
// Sizes from Circular 06/2021/TT-BCA: emblem 12 mm, portrait 20 × 30 mm.
//
// Variant 0 (cccd2021-a, Calibration): green-blue tint, name and both places on the lines
// after their labels, the chip top left of the back, MRZ on a white band, fingerprints top
// right.
// Variant 1 (cccd2021-b, HeldOut): warm tint, the number in dark red, residence starting on
// the label's line, labels set in a smaller size with slashes without spaces, the chip in the
// middle of the back's left column beside the issuer's title, fingerprints lower and
// smaller, MRZ white or on the tint.
func drawCCCD2021(g *gen, v int) error {
	p := g.p
	issue, expiry, hasExp := g.citizenCardDates(day(2021, 1, 1), p.Ref)
	pal := [2]palette{{rgb(232, 242, 236), rgb(210, 230, 242), rgb(118, 168, 186)}, {rgb(246, 239, 224), rgb(228, 236, 244), rgb(196, 150, 158)}}[v]
	lab := g.st(g.label, false, 1.55, ink)
	val := g.vst(true, 2.05, ink)
	sep := " / "
	if v == 1 {
		lab.size, sep = 1.45, "/"
	}
	L := func(vi, en string) string { return vi + sep + en + ":" }

	// front
	f := g.cardSide(pal)
	f.emblem(9.6, 8.6, 6.0) // 12 mm
	hb := g.st(g.label, true, 1.95, ink)
	hr := g.st(g.label, false, 1.75, ink)
	f.header(42.8, 5.2, mottoBilingual,
		[]textStyle{hb, hr, hb, hr}, 2.45)
	qs := 10.5
	if v == 1 {
		qs = 9.5
	}
	f.qr(id1W-qs-3.2, 3.2, qs, 25, g.r)
	g.redTitle(f, 48, 18.9, "CĂN CƯỚC CÔNG DÂN", 3.3, 44)
	f.textCentered(48, 21.5, "Citizen Identity Card", g.st(g.label, false, 1.75, ink))
	f.chip(id1W-12.2, 15.6, 8.4, 6.4) // the chip symbol
	box := [2][2]float64{{3.4, 15.9}, {3.0, 16.2}}[v]
	px, py, pw, ph := box[0], box[1], 20.0, 30.0 // 20 × 30 mm
	f.portrait(g.face, px, py, pw, ph)
	expTxt := g.expiry(expiry, hasExp, StepFront)
	small := g.st(g.label, false, 1.3, ink)
	el := [2]string{"Có giá trị đến/Date of expiry:", "Có giá trị đến / Date of expiry"}[v]
	f.text(px, py+ph+1.9, el, f.fitText(el, small, pw+1.5))
	f.text(px+[2]float64{0, 1.5}[v], py+ph+4.6, expTxt, g.vst(true, [2]float64{1.8, 1.9}[v], ink))
	x0 := 25.0
	y := 25.4
	w := f.text(x0, y, L("Số", "No."), lab)
	num := g.vst(true, 2.9, rgb(20, 20, 20))
	if v == 1 {
		num.col = rgb(170, 20, 28)
	}
	f.text(x0+w+1.2, y+0.2, p.IDNumber, num)
	g.field(FieldIDNumber, StepFront, p.IDNumber)
	dy := 2.8
	if v == 1 {
		dy = 2.72
	}
	y += dy
	f.text(x0, y, L("Họ và tên", "Full name"), lab)
	y += dy
	name := p.FullName()
	f.text(x0+2, y, name, f.fitText(name, g.vst(true, 2.4, ink), id1W-x0-4))
	g.field(FieldFullName, StepFront, name)
	y += dy
	w = f.text(x0, y, L("Ngày sinh", "Date of birth"), lab)
	f.text(x0+w+1, y, dmy(p.BirthDate, "/"), val)
	g.field(FieldDateOfBirth, StepFront, iso(p.BirthDate))
	y += dy
	w = f.text(x0, y, L("Giới tính", "Sex"), lab)
	f.text(x0+w+1, y, sexVN(p.Sex), val)
	w2 := f.text(x0+24, y, L("Quốc tịch", "Nationality"), lab)
	f.text(x0+24+w2+1, y, "Việt Nam", val)
	g.field(FieldSex, StepFront, p.Sex)
	g.field(FieldNationality, StepFront, "VNM")
	y += dy
	f.text(x0, y, L("Quê quán", "Place of origin"), lab)
	y += dy
	style := placeShort
	if v == 1 {
		style = placeFull
	}
	origin := p.Origin.format(style, false)
	ols, ost := f.wrapFit(origin, val, id1W-x0-3, id1W-x0-3, 1)
	f.lines(x0, y, dy, ols, ost)
	g.field(FieldPlaceOfOrigin, StepFront, strings.Join(ols, " "))
	y += dy
	res := p.Residence.format(style, true)
	var rls []string
	if v == 0 {
		f.text(x0, y, L("Nơi thường trú", "Place of residence"), lab)
		y += dy
		rls, val = f.wrapFit(res, val, id1W-x0-3, id1W-x0-3, 2)
		if len(rls) == 1 && f.width(res, val) > 30 {
			// real cards break long addresses after the commune
			rls = splitAtComma(res)
		}
		f.lines(x0, y, dy*0.92, rls, val)
		g.field(FieldPlaceOfResidence, StepFront, strings.Join(rls, " "))
	} else {
		g.runOn(f, x0, y, dy*0.92, L("Nơi thường trú", "Place of residence"), lab, res, val, 2, FieldPlaceOfResidence, StepFront)
	}
	g.side(StepFront, f)

	// back
	b := g.cardSide(pal)
	mrz := td1(p, expiry, hasExp)
	g.doc.MRZ, g.doc.MRZSide = mrz, StepBack
	fx, fy, fw, fh := 52.0, 3.5, 15.0, 18.5
	if v == 1 {
		fx, fy, fw, fh = 55.0, 6.0, 13.5, 16.5
	} else {
		b.chip(5.5, 4.0, 11.5, 9.0)
	}
	for i, lbl := range [][2]string{{"Ngón trỏ trái", "Left index finger"}, {"Ngón trỏ phải", "Right index finger"}} {
		x := fx + float64(i)*(fw+1.2)
		b.fingerprint(x, fy, fw, fh, g.r)
		sm := g.st(g.label, false, 1.2, ink)
		b.textCentered(x+fw/2, fy+fh+1.7, lbl[0], b.fitText(lbl[0], sm, fw))
		b.textCentered(x+fw/2, fy+fh+3.3, lbl[1], b.fitText(lbl[1], sm, fw))
	}
	y = 17.5
	if v == 1 {
		y = 6.5
	}
	w = b.text(4.5, y, L("Đặc điểm nhân dạng", "Personal identification"), lab)
	mv := g.vst(false, 1.75, ink)
	var mls []string
	if v == 0 {
		mls, mv = b.wrapFit(p.Marks, mv, fx-6, fx-6, 2)
		b.lines(4.5, y+2.7, 2.6, mls, mv)
		y += 2.7 + 2.6*float64(len(mls)) + 0.6
	} else {
		mls, mv = b.wrapFit(p.Marks, mv, fx-w-6.5, fx-6, 2)
		b.text(4.5+w+1, y, mls[0], mv)
		y += 2.6
		if len(mls) > 1 {
			b.text(4.5, y, mls[1], mv)
			y += 2.6
		}
		y += 0.8
	}
	g.field(FieldIdentifyingMarks, StepBack, strings.Join(mls, " "))
	w = b.text(4.5, y, L("Ngày, tháng, năm", "Date, month, year"), lab)
	b.text(4.5+w+1, y, dmy(issue, "/"), g.vst(true, 1.8, ink))
	g.field(FieldIssueDate, StepBack, iso(issue))
	y += 2.6
	tb := g.st(g.label, true, 1.35, ink)
	te := g.st(g.label, false, 1.15, ink)
	tcx := 27.0
	titles := []string{"CỤC TRƯỞNG CỤC CẢNH SÁT", "QUẢN LÝ HÀNH CHÍNH VỀ TRẬT TỰ XÃ HỘI"}
	if v == 1 {
		titles = []string{"CỤC TRƯỞNG CỤC CẢNH SÁT QUẢN LÝ", "HÀNH CHÍNH VỀ TRẬT TỰ XÃ HỘI"}
		tcx = 35.0
		y += 1.5
		b.chip(4.5, y-1.2, 11.0, 8.6) // the chip at the foot of the left column, beside the title
	}
	y = b.header(tcx, y, titles, []textStyle{tb}, 1.8)
	b.header(tcx, y, []string{"DIRECTOR GENERAL OF THE POLICE DEPARTMENT", "FOR ADMINISTRATIVE MANAGEMENT OF SOCIAL ORDER"}, []textStyle{te}, 1.6)
	b.seal(tcx-6, y+3.2, 4.6)
	b.signature(tcx-3, y+1.2, 14, 3.2, g.r)
	mrzTop := 40.6
	white := v == 0 || g.r.IntN(2) == 0
	g.mrzBand(b, mrz, 3.8, mrzTop, id1W, id1H-mrzTop, 78, white)
	g.side(StepBack, b)
	return nil
}

// redTitle draws a document's red title centred on cx, in bold of size mm, no wider than
// maxW mm.
func (g *gen) redTitle(c *canvas, cx, y float64, s string, size, maxW float64) {
	c.textCentered(cx, y, s, c.fitText(s, g.st(g.label, true, size, titleRed), maxW))
}

// runOn draws label at (x, y) and value after it, wrapped onto at most n lines that
// continue dy apart from x (shrinking the type when needed); it records the printed value as
// field on side and returns the baseline of the value's last line.
func (g *gen) runOn(c *canvas, x, y, dy float64, label string, lab textStyle, value string, val textStyle, n int, field, side string) float64 {
	w := c.text(x, y, label, lab)
	right := float64(c.img.Bounds().Dx()) / c.s // the side's width in mm
	ls, st := c.wrapFit(value, val, right-x-w-3, right-x-3, n)
	c.text(x+w+1, y, ls[0], st)
	for _, l := range ls[1:] {
		y += dy
		c.text(x, y, l, st)
	}
	g.field(field, side, strings.Join(ls, " "))
	return y
}

// expiry records a card's expiry date printed on side and returns its printed text: the
// date, or "Không thời hạn" (no time limit) when the card has none.
func (g *gen) expiry(t time.Time, ok bool, side string) string {
	if !ok {
		return "Không thời hạn"
	}
	g.field(FieldExpiryDate, side, iso(t))
	return dmy(t, "/")
}

// splitAtComma breaks an address after its first comma (two lines).
func splitAtComma(s string) []string {
	i := strings.Index(s, ", ")
	if i < 0 {
		return []string{s}
	}
	return []string{s[:i+1], s[i+2:]}
}
