// Fast decoding of the flat wire objects read on every `sendMessage` (its body, the token
// claims) through `FlatJSONReader`: nil whenever the text is not in that reader's plain
// subset or lacks a field, and the caller decodes with `JSONDecoder` (which then reports the
// same errors as before). `PlainWireDecodingTests` checks that every text accepted here
// decodes to the same value with `JSONDecoder`.

extension SendMessageInput {
    /// The input, when `bytes` is a plain JSON object with exactly these fields.
    public init?(plainJSON bytes: UnsafeRawBufferPointer) {
        var convoId: String?, epoch: Int?, messageType: MessageType?, hash: String?, size: Int?
        var recordName: String?, recordNameSeen = false
        let complete = FlatJSONReader.read(bytes) { key, value in
            switch (key, value) {
            case ("convoId", .string(let text)) where convoId == nil: convoId = text
            case ("epoch", .integer(let number)) where epoch == nil: epoch = Int(number)
            case ("messageType", .string(let text)) where messageType == nil:
                messageType = MessageType(rawValue: text)
                return messageType != nil
            case ("hash", .string(let text)) where hash == nil: hash = text
            case ("size", .integer(let number)) where size == nil: size = Int(number)
            case ("recordName", .string(let text)) where !recordNameSeen:
                recordName = text
                recordNameSeen = true
            case ("recordName", .null) where !recordNameSeen: recordNameSeen = true
            default: return false
            }
            return true
        }
        guard complete, let convoId, let epoch, let messageType, let hash, let size else { return nil }
        self.init(convoId: convoId, epoch: epoch, messageType: messageType, hash: hash, size: size, recordName: recordName)
    }
}

extension ServiceAuthClaims {
    /// The claims, when `bytes` is a plain JSON object with exactly these fields.
    public init?(plainJSON bytes: UnsafeRawBufferPointer) {
        var iss: String?, aud: String?, lxm: String?, iat: Int64?, exp: Int64?, jti: String?
        let complete = FlatJSONReader.read(bytes) { key, value in
            switch (key, value) {
            case ("iss", .string(let text)) where iss == nil: iss = text
            case ("aud", .string(let text)) where aud == nil: aud = text
            case ("lxm", .string(let text)) where lxm == nil: lxm = text
            case ("iat", .integer(let number)) where iat == nil: iat = number
            case ("exp", .integer(let number)) where exp == nil: exp = number
            case ("jti", .string(let text)) where jti == nil: jti = text
            default: return false
            }
            return true
        }
        guard complete, let iss, let aud, let lxm, let iat, let exp, let jti else { return nil }
        self.init(iss: iss, aud: aud, lxm: lxm, iat: iat, exp: exp, jti: jti)
    }
}
