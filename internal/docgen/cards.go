package docgen

import (
	"fmt"
	"strings"
)

// ---------------------------------------------------------------------------------------
// 12-digit citizen identity card without chip, 2016 ("CĂN CƯỚC CÔNG DÂN").
//
// Follows the card issued 2016–2021 under Circular 61/2015/TT-BCA: Vietnamese labels only.
// Front: emblem top left with the portrait under it and "Có giá trị đến" with the date under
// the portrait; the national motto centred; the red title "CĂN CƯỚC CÔNG DÂN"; "Số:" with
// the 12-digit number in red; "Họ và tên:", "Ngày, tháng, năm sinh:", "Giới tính:" and
// "Quốc tịch:" on one line, "Quê quán:", "Nơi thường trú:" (two lines). Back: "Đặc điểm nhân
// dạng:", the issue date written "Ngày dd tháng mm năm yyyy", the issuer's title (Director
// of the Police Department for Residence Registration and National Population Data),
// signature and seal on the left, the two index-finger prints on the right. No MRZ.
//
// Variant 0 (cccd2016-a, Calibration): name on the label's line, places after their labels,
// fingerprints right. Variant 1 (cccd2016-b, HeldOut): name in larger type on the line under
// its label, places on the line under "Quê quán:", abbreviated unit names, fingerprints
// framed in a table with the labels above.
func drawCCCD2016(g *gen, v int) error {
	p := g.p
	issue, expiry, hasExp := g.citizenCardDates(day(2016, 1, 1), day(2021, 6, 30))
	pal := [2]palette{{rgb(226, 240, 232), rgb(238, 244, 222), rgb(110, 170, 150)}, {rgb(228, 236, 246), rgb(240, 240, 230), rgb(130, 150, 200)}}[v]
	lab := g.st(g.label, false, 1.75, ink)
	val := g.vst(true, 2.1, ink)
	f := g.cardSide(pal)
	f.emblem(10.5, 9.8, 6.0)
	hb := g.st(g.label, true, 2.1, ink)
	hr := g.st(g.label, true, 1.85, ink)
	f.header(50, 5.6, mottoVN, []textStyle{hb, hr}, 2.7)
	if v == 1 {
		f.rect(40, 9.4, 20, 0.15, ink)
	}
	g.redTitle(f, 52, 14.6, "CĂN CƯỚC CÔNG DÂN", 3.6, 56)
	box := [2][4]float64{{3.5, 18.5, 19.5, 25.0}, {4.0, 18.0, 18.5, 24.0}}[v]
	px, py, pw, ph := box[0], box[1], box[2], box[3]
	f.portrait(g.face, px, py, pw, ph)
	expTxt := g.expiry(expiry, hasExp, StepFront)
	sm := g.st(g.label, false, 1.4, ink)
	f.text(px, py+ph+2.3, "Có giá trị đến:", sm)
	f.text(px, py+ph+4.9, expTxt, g.vst(true, 1.75, ink))
	x0, y, dy := 25.5, 19.8, 3.05
	w := f.text(x0, y, "Số:", g.st(g.label, true, 2.2, ink))
	f.text(x0+w+1.5, y+0.2, p.IDNumber, g.vst(true, 3.0, titleRed))
	g.field(FieldIDNumber, StepFront, p.IDNumber)
	y += dy + 0.3
	name := p.FullName()
	if v == 0 {
		w = f.text(x0, y, "Họ và tên:", lab)
		f.text(x0+w+1, y, name, f.fitText(name, g.vst(true, 2.3, ink), id1W-x0-w-3))
	} else {
		f.text(x0, y, "Họ và tên:", lab)
		y += dy
		f.text(x0+3, y, name, f.fitText(name, g.vst(true, 2.6, ink), id1W-x0-5))
	}
	g.field(FieldFullName, StepFront, name)
	y += dy
	w = f.text(x0, y, "Ngày, tháng, năm sinh:", lab)
	f.text(x0+w+1, y, dmy(p.BirthDate, "/"), val)
	g.field(FieldDateOfBirth, StepFront, iso(p.BirthDate))
	y += dy
	w = f.text(x0, y, "Giới tính:", lab)
	f.text(x0+w+1, y, sexVN(p.Sex), val)
	w2 := f.text(x0+20, y, "Quốc tịch:", lab)
	f.text(x0+20+w2+1, y, "Việt Nam", val)
	g.field(FieldSex, StepFront, p.Sex)
	g.field(FieldNationality, StepFront, "VNM")
	y += dy
	style := placeFull
	if v == 1 {
		style = placeAbbr
	}
	origin := p.Origin.format(style, false)
	if v == 0 {
		y = g.runOn(f, x0, y, dy*0.9, "Quê quán:", lab, origin, val, 2, FieldPlaceOfOrigin, StepFront)
	} else {
		f.text(x0, y, "Quê quán:", lab)
		y += dy * 0.9
		ols, ost := f.wrapFit(origin, val, id1W-x0-3, id1W-x0-3, 1)
		f.text(x0, y, ols[0], ost)
		g.field(FieldPlaceOfOrigin, StepFront, ols[0])
	}
	y += dy
	g.runOn(f, x0, y, dy*0.9, "Nơi thường trú:", lab, p.Residence.format(style, true), val, 2, FieldPlaceOfResidence, StepFront)
	g.side(StepFront, f)

	b := g.cardSide(pal)
	fx, fy, fw, fh := 52.5, 4.5, 14.5, 19.0
	if v == 1 {
		fx, fy, fw, fh = 50.0, 7.5, 16.0, 20.0
	}
	for i, lbl := range []string{"Ngón trỏ trái", "Ngón trỏ phải"} {
		x := fx + float64(i)*(fw+0.8)
		b.fingerprint(x, fy, fw, fh, g.r)
		lst := g.st(g.label, false, 1.4, ink)
		if v == 0 {
			b.textCentered(x+fw/2, fy+fh+2.2, lbl, lst)
		} else {
			b.textCentered(x+fw/2, fy-1.0, lbl, lst)
		}
	}
	y = 8.0
	b.text(4.5, y, "Đặc điểm nhân dạng:", lab)
	mls, mst := b.wrapFit(p.Marks, g.vst(false, 1.9, ink), fx-7, fx-7, 2)
	y = b.lines(4.5, y+3.0, 2.8, mls, mst)
	g.field(FieldIdentifyingMarks, StepBack, strings.Join(mls, " "))
	y += 1.5
	d := fmt.Sprintf("Ngày %02d tháng %02d năm %d", issue.Day(), int(issue.Month()), issue.Year())
	cx := 26.0
	b.textCentered(cx, y, d, g.vst(false, 1.9, ink))
	g.field(FieldIssueDate, StepBack, iso(issue))
	y += 2.9
	titles := []string{"CỤC TRƯỞNG CỤC CẢNH SÁT", "ĐKQL CƯ TRÚ VÀ DLQG VỀ DÂN CƯ"}
	if v == 1 {
		titles = []string{"CỤC TRƯỞNG CỤC CẢNH SÁT ĐĂNG KÝ", "QUẢN LÝ CƯ TRÚ VÀ DỮ LIỆU QUỐC GIA", "VỀ DÂN CƯ"}
	}
	y = b.header(cx, y, titles, []textStyle{g.st(g.label, true, 1.55, ink)}, 2.1)
	b.seal(cx-5, y+4.5, 5.5)
	b.signature(cx-2, y+2.5, 15, 4, g.r)
	b.textCentered(cx, y+12.5, signer(g), g.st(g.label, true, 1.7, ink))
	g.side(StepBack, b)
	return nil
}

// signer is a fictional official's name.
func signer(g *gen) string {
	return pick(g.r, []string{"Nguyễn Văn Bình", "Trần Quốc Hưng", "Lê Minh Tuấn", "Phạm Đức Long", "Hoàng Văn Thắng"})
}

// ---------------------------------------------------------------------------------------
// People's identity card with 9 digits ("GIẤY CHỨNG MINH NHÂN DÂN", CMND).
//
// Follows the card issued under Decree 05/1999/ND-CP: Vietnamese only, values typed on dotted
// lines. Front: emblem top left with the portrait under it; "CỘNG HÒA XÃ HỘI CHỦ NGHĨA VIỆT
// NAM / Độc lập - Tự do - Hạnh phúc"; red title "GIẤY CHỨNG MINH NHÂN DÂN"; "Số" with the
// 9-digit number in red; "Họ tên", "Sinh ngày" (dd-mm-yyyy), "Nguyên quán", "Nơi ĐKHK thường
// trú" on two lines. Back: "Dân tộc", "Tôn giáo", "DẤU VẾT RIÊNG VÀ DỊ HÌNH" with the marks,
// "Ngày dd tháng mm năm yyyy", "GIÁM ĐỐC CA" of the province with signature and seal, and
// the two index-finger prints in a table. No sex, nationality, expiry or MRZ.
//
// Variant 0 (cmnd-a, Calibration): sky-blue tint, fingerprints on the left of the back.
// Variant 1 (cmnd-b, HeldOut): grey-green tint, "Họ và tên", fingerprints on the right, short
// place names, dates with slashes.
func drawCMND(g *gen, v int) error {
	p := g.p
	lo := later(p.BirthDate.AddDate(14, 0, 0), p.Ref.AddDate(-15, 0, 1))
	issue := randDate(g.r, lo, earlier(day(2021, 6, 30), p.Ref))
	pal := [2]palette{{rgb(224, 238, 248), rgb(236, 246, 240), rgb(120, 160, 210)}, {rgb(230, 238, 226), rgb(242, 238, 226), rgb(150, 170, 130)}}[v]
	lab := g.st(g.label, false, 1.9, ink)
	val := g.vst(true, 2.2, rgb(30, 30, 60))
	dots := func(c *canvas, x0, y, x1 float64) {
		for x := x0; x < x1; x += 0.8 {
			c.rect(x, y+0.35, 0.22, 0.22, rgb(70, 70, 70))
		}
	}
	f := g.cardSide(pal)
	f.emblem(11, 10.5, 7.2)
	f.header(52, 5.5, mottoVN,
		[]textStyle{g.st(g.label, true, 1.9, ink), g.st(g.label, true, 1.8, ink)}, 2.5)
	g.redTitle(f, 52, 13.0, "GIẤY CHỨNG MINH NHÂN DÂN", 3.1, 60)
	x0 := 25.0
	y := 18.2
	w := f.text(x0+6, y, "Số", g.st(g.label, true, 2.4, titleRed))
	f.text(x0+6+w+2, y+0.3, p.LegacyID, g.vst(true, 3.4, titleRed))
	g.field(FieldIDNumber, StepFront, p.LegacyID)
	px, py, pw, ph := 4.5, 21.0, 17.0, 23.0
	f.portrait(g.face, px, py, pw, ph)
	dy := 3.8
	y += dy + 0.4
	nameLab := "Họ tên"
	if v == 1 {
		nameLab = "Họ và tên"
	}
	w = f.text(x0, y, nameLab, lab)
	dots(f, x0+w+1, y, id1W-3)
	name := p.FullName()
	f.text(x0+w+3, y-0.3, name, f.fitText(name, g.vst(true, 2.5, rgb(30, 30, 60)), id1W-x0-w-6))
	g.field(FieldFullName, StepFront, name)
	y += dy
	w = f.text(x0, y, "Sinh ngày", lab)
	dots(f, x0+w+1, y, id1W-3)
	sep := "-"
	if v == 1 {
		sep = "/"
	}
	f.text(x0+w+3, y-0.3, dmy(p.BirthDate, sep), val)
	g.field(FieldDateOfBirth, StepFront, iso(p.BirthDate))
	y += dy
	style := placeAbbr
	if v == 1 {
		style = placeShort
	}
	// a place typed on two dotted lines, the first after its label
	place := func(y float64, label, value, field string) {
		w := f.text(x0, y, label, lab)
		dots(f, x0+w+1, y, id1W-3)
		dots(f, x0, y+dy*0.85, id1W-3)
		ls, st := f.wrapFit(value, val, id1W-x0-w-6, id1W-x0-4, 2)
		f.text(x0+w+3, y-0.3, ls[0], st)
		if len(ls) > 1 {
			f.text(x0+1, y+dy*0.85-0.3, ls[1], st)
		}
		g.field(field, StepFront, strings.Join(ls, " "))
	}
	place(y, "Nguyên quán", p.Origin.format(style, false), FieldPlaceOfOrigin)
	place(y+dy*1.85, "Nơi ĐKHK thường trú", p.Residence.format(style, true), FieldPlaceOfResidence)
	g.side(StepFront, f)

	b := g.cardSide(pal)
	tx, fx := 36.0, 3.0
	if v == 1 {
		tx, fx = 3.5, 52.0
	}
	fw, fh := 15.0, 21.0
	for i, lbl := range []string{"NGÓN TRỎ TRÁI", "NGÓN TRỎ PHẢI"} {
		x := fx + float64(i)*(fw+0.6)
		b.frame(x, 3.0, fw, 3.2, 0.15, ink)
		b.textCentered(x+fw/2, 5.3, lbl, b.fitText(lbl, g.st(g.label, true, 1.4, ink), fw-1))
		b.fingerprint(x, 6.2, fw, fh, g.r)
	}
	y = 6.0
	w = b.text(tx, y, "Dân tộc:", lab)
	b.text(tx+w+1, y, p.Ethnicity, val)
	w2 := b.text(tx+25, y, "Tôn giáo:", lab)
	b.text(tx+25+w2+1, y, p.Religion, val)
	g.field(FieldEthnicity, StepBack, p.Ethnicity)
	g.field(FieldReligion, StepBack, p.Religion)
	y += 4.0
	b.text(tx, y, "DẤU VẾT RIÊNG VÀ DỊ HÌNH", g.st(g.label, true, 1.8, ink))
	y += 3.0
	mls, mst := b.wrapFit(p.Marks, g.vst(false, 2.0, rgb(30, 30, 60)), 45, 45, 2)
	y = b.lines(tx, y, 2.9, mls, mst)
	g.field(FieldIdentifyingMarks, StepBack, strings.Join(mls, " "))
	y += 1.8
	cx := tx + 23
	b.textCentered(cx, y, fmt.Sprintf("Ngày %02d tháng %02d năm %d", issue.Day(), int(issue.Month()), issue.Year()), g.vst(false, 1.9, ink))
	g.field(FieldIssueDate, StepBack, iso(issue))
	y += 3.0
	prov := strings.ToUpper(p.Residence.Province)
	if p.Residence.ProvinceKind == "Thành phố" {
		prov = "TP. " + prov
	} else {
		prov = "CA TỈNH " + prov
	}
	b.textCentered(cx, y, "GIÁM ĐỐC "+prov, b.fitText("GIÁM ĐỐC "+prov, g.st(g.label, true, 1.7, ink), 46))
	b.seal(cx-6, y+6, 5.5)
	b.signature(cx-3, y+3.5, 14, 4, g.r)
	b.textCentered(cx, y+13, signer(g), g.st(g.label, true, 1.7, ink))
	g.side(StepBack, b)
	return nil
}
