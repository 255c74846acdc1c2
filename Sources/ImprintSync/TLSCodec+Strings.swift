import ImprintMLS

/// UTF-8 strings (`opaque text<V>`) and lists of them (`opaque list<V>` of such strings) in
/// the bodies of sync payloads: the DIDs of snapshots, admin lists and requests for missing
/// changes. One reader, so each body refuses bytes that are not UTF-8 the same way.
///
/// ```swift
/// w.writeStrings(admins)
/// admins = try r.readStrings(of: "an admin list")
/// ```
extension TLSWriter {
    mutating func writeString(_ text: String) {
        writeOpaque(Array(text.utf8))
    }

    mutating func writeStrings(_ texts: [String]) {
        writeVector(texts) { w, text in w.writeString(text) }
    }
}

extension TLSReader {
    /// Throws ``SyncError`` (`.invalidPayload`) naming `what` when the bytes are not UTF-8,
    /// and the codec's error when they are truncated.
    mutating func readString(of what: String) throws -> String {
        guard let text = String(validating: try readOpaque(), as: UTF8.self) else {
            throw SyncError(.invalidPayload, "a string of \(what) is not UTF-8")
        }
        return text
    }

    mutating func readStrings(of what: String) throws -> [String] {
        try readVector { r in try r.readString(of: what) }
    }
}
