import Foundation

// Hand-written wire JSON for the types every `sendMessage` encodes (its response and its
// `message` event). Each writes exactly the bytes `WireJSON.encoder().encode(value)` writes
// (keys sorted, absent optionals omitted); `WireEncodingTests` compares the two.

extension MessageEvent {
    /// `WireJSON.encoder().encode(self)`, without `JSONEncoder`.
    public func wireJSON() -> [UInt8] {
        var writer = WireJSONWriter(capacity: 384)
        writer.beginObject()
        writer.member("convoId", convoId)
        writer.member("epoch", message.epoch)
        writer.member("hash", message.hash)
        writer.member("messageType", message.messageType.rawValue)
        if let recordName = message.recordName { writer.member("recordName", recordName) }
        writer.member("sender", message.sender)
        writer.member("sentAt", message.sentAt)
        writer.member("seq", message.seq)
        writer.member("size", message.size)
        writer.endObject()
        return writer.bytes
    }
}

extension SendMessageOutput {
    /// `WireJSON.encoder().encode(self)`, without `JSONEncoder` (a provider with a `config`
    /// object is still encoded by it: its values are open-ended).
    public func wireJSON() throws -> [UInt8] {
        var writer = WireJSONWriter(capacity: 96 + recipients.count * 96)
        writer.beginObject()
        writer.member("epoch", epoch)
        writer.key("recipients")
        writer.raw("[")
        for (index, recipient) in recipients.enumerated() {
            if index > 0 { writer.raw(",") }
            writer.beginObject()
            writer.member("did", recipient.did)
            writer.key("storage")
            try recipient.storage.writeWireJSON(to: &writer)
            writer.endObject()
        }
        writer.raw("]")
        writer.member("seq", seq)
        writer.member("serverTime", serverTime)
        writer.endObject()
        return writer.bytes
    }
}

extension StorageProvider {
    func writeWireJSON(to writer: inout WireJSONWriter) throws {
        guard config == nil else {
            writer.raw(try WireJSON.encoder().encode(self))
            return
        }
        writer.beginObject()
        if let endpoint { writer.member("endpoint", endpoint) }
        writer.member("type", type)
        writer.endObject()
    }
}
