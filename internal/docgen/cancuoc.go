package docgen

import "strings"

// ---------------------------------------------------------------------------------------
// Identity card, 2024 ("CĂN CƯỚC", chip).
//
// Follows the card issued from 1 July 2024 under the Law on Identification 2023 and Circular
// 16/2024/TT-BCA (the card for holders aged six and over). Blue background lighter towards
// the middle; headings and labels in blue-violet, values in black. Front, left to right and
// top to bottom: the emblem (12 mm) top left, "CỘNG HÒA XÃ HỘI CHỦ NGHĨA VIỆT NAM / Độc lập -
// Tự do - Hạnh phúc / SOCIALIST REPUBLIC OF VIET NAM / Independence - Freedom - Happiness",
// the title "CĂN CƯỚC" with "IDENTITY CARD" and the electronic-chip symbol, the portrait
// (20 × 30 mm), "Số định danh cá nhân/Personal identification number", "Họ, chữ đệm và tên
// khai sinh/Full name", "Ngày, tháng, năm sinh/Date of birth", "Giới tính/Sex",
// "Quốc tịch/Nationality". Back, top to bottom: "Nơi cư trú/Place of residence", "Nơi đăng
// ký khai sinh/Place of birth", the chip, the QR code (18 × 18 mm), "Ngày, tháng, năm
// cấp/Date of issue", "Ngày, tháng, năm hết hạn/Date of expiry", "BỘ CÔNG AN / MINISTRY OF
// PUBLIC SECURITY" with signature and seal, and the TD1 MRZ. No place of origin, no
// identifying marks and no fingerprints are printed (they are in the chip).
//
// Variant 0 (cancuoc2024-a, Calibration): pale blue tint, values on the label's line where
// they fit, chip then QR code left to right, dates beside the QR code, MRZ white or tinted.
// Variant 1 (cancuoc2024-b, HeldOut): blue-green tint, every value on the line under its
// label, labels with spaced slashes, the QR code left of the chip, dates under the chip,
// provinces written with their kind ("Tỉnh", "Thành phố").
func drawCanCuoc2024(g *gen, v int) error {
	p := g.p
	issue, expiry, hasExp := g.citizenCardDates(day(2024, 7, 1), p.Ref)
	pal := [2]palette{
		{rgb(226, 236, 250), rgb(246, 242, 214), rgb(140, 160, 215)},
		{rgb(220, 238, 240), rgb(240, 244, 222), rgb(120, 170, 185)},
	}[v]
	violet := rgb(62, 52, 140)
	sep := "/"
	if v == 1 {
		sep = " / "
	}
	L := func(vi, en string) string { return vi + sep + en + ":" }
	lab := g.st(g.label, false, 1.45, violet)
	val := g.vst(true, 2.05, ink)

	f := g.cardSide(pal)
	f.emblem(9.5, 9.0, 6.0)
	hb := g.st(g.label, true, 1.85, violet)
	hr := g.st(g.label, false, 1.65, violet)
	f.header(48, 4.8, mottoBilingual, []textStyle{hb, hr, hb, hr}, 2.3)
	g.redTitle(f, 48, 17.6, "CĂN CƯỚC", 3.8, 40)
	f.textCentered(48, 20.3, "IDENTITY CARD", g.st(g.label, true, 1.8, violet))
	f.chip(id1W-13.5, 13.6, 8.5, 6.6) // the electronic-chip symbol
	f.portrait(g.face, 3.6, 18.5, 20, 30)
	x0, y, dy := 26.5, 24.4, 2.7
	w := id1W - x0 - 2
	idl := L("Số định danh cá nhân", "Personal identification number")
	f.text(x0, y, idl, f.fitText(idl, lab, w))
	y += dy + 0.4
	f.text(x0+2, y, p.IDNumber, g.vst(true, [2]float64{2.7, 2.9}[v], ink))
	g.field(FieldIDNumber, StepFront, p.IDNumber)
	y += dy + 0.3
	f.text(x0, y, L("Họ, chữ đệm và tên khai sinh", "Full name"), lab)
	y += dy + 0.2
	name := p.FullName()
	f.text(x0+2, y, name, f.fitText(name, g.vst(true, 2.45, ink), w-2))
	g.field(FieldFullName, StepFront, name)
	y += dy + 0.4
	pair := func(y float64, label, value string) float64 {
		if v == 0 {
			return f.text(x0, y, label, lab) + f.text(x0+f.width(label, lab)+1, y, value, val)
		}
		f.text(x0, y, label, lab)
		return f.text(x0+2, y+dy*0.95, value, val)
	}
	pair(y, L("Ngày, tháng, năm sinh", "Date of birth"), dmy(p.BirthDate, "/"))
	g.field(FieldDateOfBirth, StepFront, iso(p.BirthDate))
	if v == 1 {
		y += dy * 0.95
	}
	y += dy
	pair(y, L("Giới tính", "Sex"), sexVN(p.Sex))
	g.field(FieldSex, StepFront, p.Sex)
	nx := x0 + 22.0
	if v == 0 {
		w2 := f.text(nx, y, L("Quốc tịch", "Nationality"), lab)
		f.text(nx+w2+1, y, "Việt Nam", val)
	} else {
		f.text(nx, y, L("Quốc tịch", "Nationality"), lab)
		f.text(nx+2, y+dy*0.95, "Việt Nam", val)
	}
	g.field(FieldNationality, StepFront, "VNM")
	g.side(StepFront, f)

	b := g.cardSide(pal)
	x0, y = 4.0, 4.6
	vs := g.vst(true, 1.9, ink)
	style := placeFull
	if v == 1 {
		style = placeKinds
	}
	place := func(label, value, field string) {
		if v == 0 {
			y = g.runOn(b, x0, y, 2.45, label, lab, value, vs, 2, field, StepBack) + 2.55
			return
		}
		b.text(x0, y, label, lab)
		y += 2.45
		ls, st := b.wrapFit(value, vs, id1W-x0-4, id1W-x0-4, 2)
		y = b.lines(x0+1, y, 2.4, ls, st) + 0.15
		g.field(field, StepBack, strings.Join(ls, " "))
	}
	place(L("Nơi cư trú", "Place of residence"), p.Residence.format(style, true), FieldPlaceOfResidence)
	place(L("Nơi đăng ký khai sinh", "Place of birth"), p.BirthPlace.format(style, false), FieldPlaceOfBirth)
	top := y - 1.2
	qr, chipX, dx := x0+13.5, x0, x0+33.5
	if v == 1 {
		qr, chipX, dx = x0, x0+20.5, x0+33.5
	}
	b.chip(chipX+0.5, top+2.5, 11.0, 8.6)
	b.qr(qr, top+0.6, 18, 25, g.r)
	expTxt := g.expiry(expiry, hasExp, StepBack)
	g.field(FieldIssueDate, StepBack, iso(issue))
	dv := g.vst(true, 1.8, ink)
	yy := top + 2.2
	if v == 1 {
		dx, yy = chipX, top+13.0
		w := b.text(dx, yy, L("Ngày, tháng, năm cấp", "Date of issue"), lab)
		b.text(dx+w+1, yy, dmy(issue, "/"), dv)
		w = b.text(dx, yy+2.8, L("Ngày, tháng, năm hết hạn", "Date of expiry"), lab)
		b.text(dx+w+1, yy+2.8, expTxt, dv)
	} else {
		b.text(dx, yy, L("Ngày, tháng, năm cấp", "Date of issue"), lab)
		b.text(dx+1, yy+2.4, dmy(issue, "/"), dv)
		b.text(dx, yy+5.0, L("Ngày, tháng, năm hết hạn", "Date of expiry"), lab)
		b.text(dx+1, yy+7.4, expTxt, dv)
	}
	ix := 70.0
	iy := top + 3.0
	if v == 0 {
		iy = top + 12.0
	}
	b.header(ix, iy, []string{"BỘ CÔNG AN", "MINISTRY OF PUBLIC SECURITY"}, []textStyle{g.st(g.label, true, 1.5, violet), g.st(g.label, false, 1.1, violet)}, 1.8)
	b.seal(ix-5, iy+4.8, 3.6)
	b.signature(ix-2, iy+3.2, 11, 2.8, g.r)
	mrz := td1(p, expiry, hasExp)
	g.doc.MRZ, g.doc.MRZSide = mrz, StepBack
	g.mrzBand(b, mrz, 3.8, 41.0, id1W, id1H-41.0, 78, g.r.IntN(2) == 0)
	g.side(StepBack, b)
	return nil
}
