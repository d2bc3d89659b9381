// Texts of the capture UI in Vietnamese and English. Every key exists in both catalogues
// (test/i18n.test.mjs checks it); the quality gate's reasons and the API's problem codes are
// turned into the person's next action here, never shown raw.

export type Locale = "vi" | "en";

export const locales: readonly Locale[] = ["vi", "en"];

const en = {
  title: "Verify your identity",
  progress: "Step {n} of {total}",
  "step.document_front": "Front of your ID card",
  "step.document_back": "Back of your ID card",
  "step.passport": "Your passport's photo page",
  "step.nfc": "Your card's chip",
  "step.selfie": "A photo of your face",
  "intro.document_front": "Place the front of your card on a dark, flat surface in good light, and fit it inside the frame.",
  "intro.document_back": "Turn your card over and photograph its back, with the code lines at the bottom fully visible.",
  "intro.passport": "Open your passport at the photo page and fit the whole page, with the code lines at the bottom, inside the frame.",
  "intro.selfie": "Look straight at the camera with your face inside the oval. Remove glasses and hats; no one else in the picture.",
  "intro.nfc": "Your browser cannot read the chip. Scan this code with your phone to read the chip in the app, then come back here.",
  "action.open_camera": "Open camera",
  "action.take_photo": "Take photo",
  "action.retake": "Take the photo again",
  "action.upload": "Upload a photo instead",
  "action.use_photo": "Use this photo",
  "action.continue": "Continue",
  "action.open_on_phone": "Open on this phone",
  "camera.unavailable": "The camera cannot be used here. Upload a photo of the {what} instead.",
  "camera.starting": "Starting the camera…",
  "camera.label.document": "Camera view. Fit the card inside the frame.",
  "camera.label.selfie": "Camera view. Fit your face inside the oval.",
  "hint.dark": "It is too dark: move to a brighter place.",
  "hint.bright": "It is too bright: move away from direct light.",
  "hint.blurry": "Hold still: the picture is blurred.",
  "hint.ok": "Looks good. Take the photo when ready.",
  "status.uploading": "Sending the photo…",
  "status.checking": "Checking the photo…",
  "status.accepted": "Photo accepted.",
  "status.retake": "Please take the photo again:",
  "status.pending": "The photo is being checked. Please wait…",
  "status.waiting_phone": "Waiting for the chip to be read on your phone…",
  "status.chip_done": "The chip has been read.",
  "status.processing": "Thank you. We are checking your documents…",
  "final.verified": "You are verified. You can close this page.",
  "final.rejected": "We could not verify your identity. Please contact the service that sent you here.",
  "final.expired": "This link has expired. Ask the service that sent you here for a new one.",
  "final.cancelled": "This verification was cancelled.",
  "reason.blurry": "The picture is blurred: hold the phone still and let the camera focus.",
  "reason.glare": "There is a reflection on the document: tilt it slightly or move away from the light.",
  "reason.not_framed": "Fit the whole document inside the frame, with a little space around it.",
  "reason.too_dark": "It is too dark: move to a brighter place.",
  "reason.no_document": "No document was found: place the document inside the frame.",
  "reason.no_face": "No face was found: look straight at the camera, face inside the oval.",
  "reason.multiple_faces": "More than one face is visible: make sure you are alone in the picture.",
  "reason.face_too_small": "Your face is too small: move closer to the camera.",
  "reason.other": "The photo could not be used: please try again.",
  "error.session_expired": "This link has expired. Ask the service that sent you here for a new one.",
  "error.session_closed": "This verification is already finished.",
  "error.invalid_image": "This file is not a photo we can read. Use a JPEG or PNG picture.",
  "error.payload_too_large": "This file is too large. Use a picture under 10 MB.",
  "error.unauthorized": "This link is not valid. Ask the service that sent you here for a new one.",
  "error.not_found": "This link is not valid. Ask the service that sent you here for a new one.",
  "error.session_not_found": "This link is not valid. Ask the service that sent you here for a new one.",
  "error.forbidden": "This link is not valid. Ask the service that sent you here for a new one.",
  "error.unavailable": "The service is busy. Please wait a moment and try again.",
  "error.rate_limited": "Too many attempts. Please wait a moment and try again.",
  "error.overloaded": "The service is busy. Please wait a moment and try again.",
  "error.network": "The connection failed. Check your connection and try again.",
  "error.other": "Something went wrong. Please try again.",
  "what.document": "document",
  "what.selfie": "face",
  "handoff.link": "Or open this link on your phone:",
  "handoff.qr_alt": "QR code with a link that opens the chip reading on your phone",
};

export type TextKey = keyof typeof en;

const vi: Record<TextKey, string> = {
  title: "Xác minh danh tính",
  progress: "Bước {n}/{total}",
  "step.document_front": "Mặt trước thẻ căn cước",
  "step.document_back": "Mặt sau thẻ căn cước",
  "step.passport": "Trang ảnh hộ chiếu",
  "step.nfc": "Chip trên thẻ",
  "step.selfie": "Ảnh chân dung",
  "intro.document_front": "Đặt mặt trước của thẻ trên mặt phẳng tối màu, nơi đủ sáng, và giữ thẻ nằm trong khung.",
  "intro.document_back": "Lật thẻ và chụp mặt sau, thấy rõ các dòng mã ở phía dưới.",
  "intro.passport": "Mở hộ chiếu ở trang có ảnh và giữ cả trang, gồm các dòng mã ở phía dưới, trong khung.",
  "intro.selfie": "Nhìn thẳng vào camera, giữ khuôn mặt trong khung bầu dục. Bỏ kính và mũ; không có người khác trong ảnh.",
  "intro.nfc": "Trình duyệt không đọc được chip. Quét mã này bằng điện thoại để đọc chip trong ứng dụng, rồi quay lại đây.",
  "action.open_camera": "Mở camera",
  "action.take_photo": "Chụp ảnh",
  "action.retake": "Chụp lại",
  "action.upload": "Tải ảnh lên",
  "action.use_photo": "Dùng ảnh này",
  "action.continue": "Tiếp tục",
  "action.open_on_phone": "Mở trên điện thoại này",
  "camera.unavailable": "Không dùng được camera ở đây. Hãy tải lên ảnh {what}.",
  "camera.starting": "Đang mở camera…",
  "camera.label.document": "Hình ảnh camera. Giữ thẻ nằm trong khung.",
  "camera.label.selfie": "Hình ảnh camera. Giữ khuôn mặt trong khung bầu dục.",
  "hint.dark": "Quá tối: hãy di chuyển đến nơi sáng hơn.",
  "hint.bright": "Quá sáng: tránh ánh sáng chiếu trực tiếp.",
  "hint.blurry": "Giữ yên máy: ảnh đang bị mờ.",
  "hint.ok": "Tốt. Hãy chụp khi sẵn sàng.",
  "status.uploading": "Đang gửi ảnh…",
  "status.checking": "Đang kiểm tra ảnh…",
  "status.accepted": "Ảnh đã được chấp nhận.",
  "status.retake": "Vui lòng chụp lại:",
  "status.pending": "Ảnh đang được kiểm tra. Vui lòng chờ…",
  "status.waiting_phone": "Đang chờ đọc chip trên điện thoại…",
  "status.chip_done": "Đã đọc chip.",
  "status.processing": "Cảm ơn bạn. Chúng tôi đang kiểm tra giấy tờ…",
  "final.verified": "Bạn đã được xác minh. Bạn có thể đóng trang này.",
  "final.rejected": "Chúng tôi không thể xác minh danh tính của bạn. Vui lòng liên hệ với dịch vụ đã gửi bạn đến đây.",
  "final.expired": "Liên kết đã hết hạn. Hãy yêu cầu dịch vụ đã gửi bạn đến đây cấp liên kết mới.",
  "final.cancelled": "Phiên xác minh này đã bị hủy.",
  "reason.blurry": "Ảnh bị mờ: giữ yên điện thoại và chờ camera lấy nét.",
  "reason.glare": "Giấy tờ bị lóa sáng: nghiêng nhẹ hoặc tránh xa nguồn sáng.",
  "reason.not_framed": "Giữ toàn bộ giấy tờ trong khung, chừa một khoảng trống xung quanh.",
  "reason.too_dark": "Quá tối: hãy di chuyển đến nơi sáng hơn.",
  "reason.no_document": "Không thấy giấy tờ: hãy đặt giấy tờ trong khung.",
  "reason.no_face": "Không thấy khuôn mặt: nhìn thẳng vào camera, giữ mặt trong khung bầu dục.",
  "reason.multiple_faces": "Có nhiều hơn một khuôn mặt: chỉ một mình bạn trong ảnh.",
  "reason.face_too_small": "Khuôn mặt quá nhỏ: hãy đến gần camera hơn.",
  "reason.other": "Không dùng được ảnh này: vui lòng thử lại.",
  "error.session_expired": "Liên kết đã hết hạn. Hãy yêu cầu dịch vụ đã gửi bạn đến đây cấp liên kết mới.",
  "error.session_closed": "Phiên xác minh này đã kết thúc.",
  "error.invalid_image": "Không đọc được tệp này. Hãy dùng ảnh JPEG hoặc PNG.",
  "error.payload_too_large": "Tệp quá lớn. Hãy dùng ảnh nhỏ hơn 10 MB.",
  "error.unauthorized": "Liên kết không hợp lệ. Hãy yêu cầu dịch vụ đã gửi bạn đến đây cấp liên kết mới.",
  "error.not_found": "Liên kết không hợp lệ. Hãy yêu cầu dịch vụ đã gửi bạn đến đây cấp liên kết mới.",
  "error.session_not_found": "Liên kết không hợp lệ. Hãy yêu cầu dịch vụ đã gửi bạn đến đây cấp liên kết mới.",
  "error.forbidden": "Liên kết không hợp lệ. Hãy yêu cầu dịch vụ đã gửi bạn đến đây cấp liên kết mới.",
  "error.unavailable": "Hệ thống đang bận. Vui lòng chờ một lát rồi thử lại.",
  "error.rate_limited": "Quá nhiều lần thử. Vui lòng chờ một lát rồi thử lại.",
  "error.overloaded": "Hệ thống đang bận. Vui lòng chờ một lát rồi thử lại.",
  "error.network": "Mất kết nối. Kiểm tra kết nối mạng rồi thử lại.",
  "error.other": "Đã xảy ra lỗi. Vui lòng thử lại.",
  "what.document": "giấy tờ",
  "what.selfie": "khuôn mặt",
  "handoff.link": "Hoặc mở liên kết này trên điện thoại:",
  "handoff.qr_alt": "Mã QR chứa liên kết mở bước đọc chip trên điện thoại",
};

export const catalogues: Record<Locale, Record<TextKey, string>> = { en, vi };

/** pickLocale returns the requested locale when supported, else the browser's, else "vi". */
export function pickLocale(requested?: string, browser?: readonly string[]): Locale {
  for (const l of [requested, ...(browser ?? [])]) {
    const base = (l ?? "").toLowerCase().split("-")[0];
    if (base === "vi" || base === "en") return base;
  }
  return "vi";
}

/** Translator returns the text of key in one locale, with {name} placeholders filled. */
export type Translator = (key: TextKey, vars?: Record<string, string | number>) => string;

export function translator(locale: Locale): Translator {
  const cat = catalogues[locale];
  return (key, vars) =>
    cat[key].replace(/\{(\w+)\}/g, (m, name: string) => (vars && name in vars ? String(vars[name]) : m));
}

/** reasonKey maps a quality gate reason to its text, "reason.other" when unknown. */
export function reasonKey(reason: string): TextKey {
  const key = `reason.${reason}`;
  return key in en ? (key as TextKey) : "reason.other";
}

/** errorKey maps an API problem code to its text, "error.other" when unknown. */
export function errorKey(code: string): TextKey {
  const key = `error.${code}`;
  return key in en ? (key as TextKey) : "error.other";
}
