package docgen

import (
	"fmt"
	"strings"
)

// Passport data page (TD3) in millimetres.
const (
	td3W = 125.0
	td3H = 88.0
)

// ---------------------------------------------------------------------------------------
// Passport data page.
//
// Follows the Vietnamese ordinary passport's data page (ICAO 9303 TD3, 125 × 88 mm):
// "CỘNG HÒA XÃ HỘI CHỦ NGHĨA VIỆT NAM / SOCIALIST REPUBLIC OF VIET NAM" across the top,
// "HỘ CHIẾU / PASSPORT", the portrait on the left, bilingual labels set small above their
// values ("Loại/Type" P, "Mã số/Code" VNM, "Số hộ chiếu/Passport N°", "Họ và tên/Full
// name", "Quốc tịch/Nationality", "Ngày sinh/Date of birth", "Nơi sinh/Place of birth",
// "Giới tính/Sex", "Số GCMND/ID card N°", "Ngày cấp/Date of issue", "Có giá trị đến/Date
// of expiry", "Nơi cấp/Place of issue"), the holder's signature, and the two-line MRZ
// whose personal number is the 12-digit ID. Valid ten years from issue.
//
// Variant 0 (passport-a, Calibration): rose tint, three columns of data, place of birth in
// capitals, MRZ on a white band. Variant 1 (passport-b, HeldOut): blue-green tint, two
// columns, labels with spaced slashes, place of birth in mixed case, a ghost portrait
// right, MRZ on the tint or white.
func drawPassport(g *gen, v int) error {
	p := g.p
	lo := later(p.BirthDate.AddDate(14, 0, 0), p.Ref.AddDate(-10, 0, 1))
	issue := randDate(g.r, lo, p.Ref)
	expiry := issue.AddDate(10, 0, 0)
	pal := [2]palette{{rgb(246, 236, 236), rgb(236, 240, 248), rgb(206, 150, 160)}, {rgb(228, 242, 240), rgb(244, 242, 230), rgb(120, 170, 170)}}[v]
	c := g.canvas(td3W, td3H)
	g.background(c, td3W, td3H, pal)
	hb := g.st(g.label, true, 2.4, ink)
	c.header(td3W/2, 6.0, []string{"CỘNG HÒA XÃ HỘI CHỦ NGHĨA VIỆT NAM", "SOCIALIST REPUBLIC OF VIET NAM"}, []textStyle{hb, g.st(g.label, false, 2.2, ink)}, 3.0)
	c.text(6, 14.5, "HỘ CHIẾU", g.st(g.label, true, 3.0, titleRed))
	c.text(6, 17.8, "PASSPORT", g.st(g.label, false, 2.3, titleRed))
	sep := "/"
	if v == 1 {
		sep = " / "
	}
	L := func(vi, en string) string { return vi + sep + en }
	lab := g.st(g.label, false, 1.6, rgb(60, 60, 70))
	val := g.vst(true, 2.5, ink)
	px, py, pw, ph := 6.0, 21.0, 31.0, 40.0
	c.portrait(g.face, px, py, pw, ph)
	if v == 1 && g.face != nil {
		// ghost portrait: a faint, small second copy
		gx, gy := 108.0, 44.0
		c.placeImage(g.face, gx, gy, 12, 16)
		c.shade(gx, gy, 12, 16, pal.base, func(float64, float64) float64 { return 0.65 })
	}
	x0 := 42.0
	cell := func(x, y float64, label, value string, vst textStyle, maxW float64) {
		c.text(x, y, label, lab)
		c.text(x, y+3.4, value, c.fitText(value, vst, maxW))
	}
	y := 15.0
	cols := []float64{x0, x0 + 18, x0 + 42}
	cell(cols[0], y, L("Loại", "Type"), "P", val, 15)
	cell(cols[1], y, L("Mã số", "Code"), "VNM", val, 20)
	cell(cols[2], y, L("Số hộ chiếu", "Passport N°"), p.Passport, g.vst(true, 2.9, rgb(150, 20, 30)), 38)
	g.field(FieldPassportNumber, StepPassport, p.Passport)
	y += 7.2
	name := p.FullName()
	cell(x0, y, L("Họ và tên", "Full name"), name, g.vst(true, 2.9, ink), td3W-x0-5)
	g.field(FieldFullName, StepPassport, name)
	y += 7.2
	nat := "VIỆT NAM/VIETNAMESE"
	if v == 1 {
		nat = "VIỆT NAM"
	}
	cell(x0, y, L("Quốc tịch", "Nationality"), nat, val, 50)
	g.field(FieldNationality, StepPassport, "VNM")
	y += 7.2
	pob := strings.ToUpper(p.BirthPlace.Province)
	if v == 1 {
		pob = p.BirthPlace.Province
	}
	cell(x0, y, L("Ngày sinh", "Date of birth"), dmy(p.BirthDate, "/"), val, 30)
	cell(x0+38, y, L("Nơi sinh", "Place of birth"), pob, val, td3W-x0-42)
	g.field(FieldDateOfBirth, StepPassport, iso(p.BirthDate))
	g.field(FieldPlaceOfBirth, StepPassport, pob)
	y += 7.2
	sex := fmt.Sprintf("%s/%s", strings.ToUpper(sexVN(p.Sex)), p.Sex)
	cell(x0, y, L("Giới tính", "Sex"), sex, val, 30)
	cell(x0+38, y, L("Số GCMND", "ID card N°"), p.IDNumber, val, 40)
	g.field(FieldSex, StepPassport, p.Sex)
	g.field(FieldIDNumber, StepPassport, p.IDNumber)
	y += 7.2
	cell(x0, y, L("Ngày cấp", "Date of issue"), dmy(issue, "/"), val, 30)
	cell(x0+38, y, L("Có giá trị đến", "Date of expiry"), dmy(expiry, "/"), val, 40)
	g.field(FieldIssueDate, StepPassport, iso(issue))
	g.field(FieldExpiryDate, StepPassport, iso(expiry))
	if v == 0 {
		y += 7.2
		cell(x0, y, L("Nơi cấp", "Place of issue"), "Cục Quản lý xuất nhập cảnh", g.vst(false, 2.2, ink), 60)
	} else {
		c.text(px, py+ph+3.0, L("Nơi cấp", "Place of issue"), lab)
		c.text(px, py+ph+5.8, "Cục Quản lý xuất nhập cảnh", c.fitText("Cục Quản lý xuất nhập cảnh", g.vst(false, 1.9, ink), 34))
	}
	if v == 0 {
		c.text(px, py+ph+2.8, L("Chữ ký", "Signature"), lab)
		c.signature(px+3, py+ph+3.4, 20, 3.4, g.r)
	}
	mrz := td3(p, expiry)
	g.doc.MRZ, g.doc.MRZSide = mrz, StepPassport
	top := 71.0
	g.mrzBand(c, mrz, 6.0, top, td3W, td3H-top, 113, v == 0 || g.r.IntN(2) == 0)
	g.side(StepPassport, c)
	return nil
}

// ---------------------------------------------------------------------------------------
// Vehicle registration certificate ("GIẤY CHỨNG NHẬN ĐĂNG KÝ XE").
//
// Follows the card-size certificate of the traffic police (Circular 58/2020/TT-BCA): the
// issuing police unit and the national motto at the top, the title "GIẤY CHỨNG NHẬN ĐĂNG KÝ
// XE MÔ TÔ, XE MÁY" or "... XE Ô TÔ", "Số" with the certificate number, then "Tên chủ xe",
// "Địa chỉ" (two lines), "Nhãn hiệu", "Số loại", "Màu sơn", "Dung tích", "Số máy", "Số
// khung"; the back: "Biển số đăng ký" in large type, "Đăng ký lần đầu ngày", the place and
// date of signing, the head of the unit, signature and seal.
//
// Variant 0 (vehreg-a, Calibration): blue tint, vehicle data on the front, plate and
// registration date on the back. Variant 1 (vehreg-b, HeldOut): pink-beige tint, the plate
// in a framed box on the front, engine and chassis numbers with the registration date on the
// back.
func drawVehicle(g *gen, v int) error {
	p := g.p
	veh := p.Vehicle
	pal := [2]palette{{rgb(222, 234, 248), rgb(236, 242, 250), rgb(120, 150, 210)}, {rgb(248, 236, 232), rgb(244, 242, 226), rgb(210, 160, 150)}}[v]
	lab := g.st(g.label, false, 1.75, ink)
	val := g.vst(true, 2.05, ink)
	f := g.cardSide(pal)
	unit := "CÔNG AN " + strings.ToUpper(veh.Address.ProvinceKind+" "+veh.Address.Province)
	if veh.Address.ProvinceKind == "Thành phố" {
		unit = "CÔNG AN TP. " + strings.ToUpper(veh.Address.Province)
	}
	f.header(18, 4.6, []string{unit, "PHÒNG CẢNH SÁT GIAO THÔNG"}, []textStyle{g.st(g.label, false, 1.4, ink), g.st(g.label, true, 1.4, ink)}, 2.0)
	f.header(60, 4.6, mottoVN, []textStyle{g.st(g.label, true, 1.55, ink), g.st(g.label, true, 1.45, ink)}, 2.0)
	title := "GIẤY CHỨNG NHẬN ĐĂNG KÝ XE MÔ TÔ, XE MÁY"
	if veh.Car {
		title = "GIẤY CHỨNG NHẬN ĐĂNG KÝ XE Ô TÔ"
	}
	f.textCentered(id1W/2, 11.6, title, f.fitText(title, g.st(g.label, true, 2.4, titleRed), 78))
	f.textCentered(id1W/2, 14.6, "Số: "+veh.Number, g.vst(true, 2.0, titleRed))
	x0, y, dy := 4.0, 18.6, 3.2
	w := f.text(x0, y, "Tên chủ xe:", lab)
	f.text(x0+w+1, y, veh.Owner, f.fitText(veh.Owner, val, id1W-x0-w-4))
	g.field(FieldOwner, StepFront, veh.Owner)
	y += dy
	w = f.text(x0, y, "Địa chỉ:", lab)
	als, ast := f.wrapFit(veh.Address.format(placeFull, true), val, id1W-x0-w-4, id1W-x0-4, 2)
	f.text(x0+w+1, y, als[0], ast)
	if len(als) > 1 {
		y += dy * 0.9
		f.text(x0, y, als[1], ast)
	}
	g.field(FieldAddress, StepFront, strings.Join(als, " "))
	y += dy
	pair := func(x, y float64, l, value string) {
		w := f.text(x, y, l, lab)
		f.text(x+w+1, y, value, f.fitText(value, val, 40-w))
	}
	pair(x0, y, "Nhãn hiệu:", veh.Brand)
	pair(x0+40, y, "Số loại:", veh.Model)
	g.field(FieldBrand, StepFront, veh.Brand)
	g.field(FieldModel, StepFront, veh.Model)
	y += dy
	pair(x0, y, "Màu sơn:", veh.Color)
	g.field(FieldColor, StepFront, veh.Color)
	if veh.Capacity > 0 {
		pair(x0+40, y, "Dung tích:", fmt.Sprintf("%d cm³", veh.Capacity))
	}
	y += dy
	side := StepFront
	bb := g.cardSide(pal)
	eng := f
	ey := y
	if v == 1 {
		side, eng, ey = StepBack, bb, 30.0
	}
	ew := eng.text(x0, ey, "Số máy:", lab)
	eng.text(x0+ew+1, ey, veh.EngineNumber, val)
	cw := eng.text(x0, ey+dy, "Số khung:", lab)
	eng.text(x0+cw+1, ey+dy, veh.ChassisNumber, eng.fitText(veh.ChassisNumber, val, id1W-x0-cw-4))
	g.field(FieldEngineNumber, side, veh.EngineNumber)
	g.field(FieldChassisNumber, side, veh.ChassisNumber)
	plateStyle := g.vst(true, 4.2, ink)
	if v == 0 {
		bb.text(6, 9.5, "Biển số đăng ký:", lab)
		bb.textCentered(id1W/2, 16.0, veh.Plate, plateStyle)
		g.field(FieldPlate, StepBack, veh.Plate)
	} else {
		pw := f.width(veh.Plate, g.vst(true, 3.0, ink)) + 4
		f.frame(id1W-pw-3, 42.5, pw, 7.8, 0.3, ink)
		f.text(id1W-pw-1, 44.6, "Biển số đăng ký", g.st(g.label, false, 1.3, ink))
		f.text(id1W-pw-1, 48.8, veh.Plate, g.vst(true, 3.0, ink))
		g.field(FieldPlate, StepFront, veh.Plate)
	}
	g.side(StepFront, f)
	ry := 22.0
	if v == 1 {
		ry = 12.0
	}
	w = bb.text(6, ry, "Đăng ký lần đầu ngày:", lab)
	bb.text(6+w+1, ry, dmy(veh.RegistrationDate, "/"), val)
	g.field(FieldRegistrationDate, StepBack, iso(veh.RegistrationDate))
	cx := 62.0
	signed := fmt.Sprintf("%s, ngày %02d tháng %02d năm %d", veh.Address.Province,
		veh.RegistrationDate.Day(), int(veh.RegistrationDate.Month()), veh.RegistrationDate.Year())
	bb.textCentered(cx, 38.0, signed, bb.fitText(signed, g.vst(false, 1.5, ink), 44))
	bb.textCentered(cx, 41.0, "TRƯỞNG PHÒNG", g.st(g.label, true, 1.7, ink))
	bb.seal(cx-5, 45.5, 5)
	bb.signature(cx-3, 44, 13, 4, g.r)
	bb.textCentered(cx, 52.2, signer(g), g.st(g.label, true, 1.6, ink))
	g.side(StepBack, bb)
	return nil
}
