import ImprintMLS

/// The bodies of sync payloads (snapshots, admin lists, requests and answers for missing
/// changes): one way to read a whole body, and UTF-8 strings (`opaque text<V>`) and lists of
/// them (`opaque list<V>` of such strings). So every body refuses malformed bytes, trailing
/// bytes and strings that are not UTF-8 the same way, with ``SyncError`` (`.invalidPayload`).
///
/// ```swift
/// w.writeStrings(admins)
/// let admins = try TLSReader.body(bytes, of: "admin list") { r in try r.readStrings(of: "an admin list") }
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
    /// Reads the whole of `bytes` with `read`, which must consume them exactly. Throws the
    /// ``SyncError`` `read` threw, or, for truncated, malformed or trailing bytes, an
    /// `.invalidPayload` naming `what` ("a malformed admin list: …").
    static func body<T>(_ bytes: [UInt8], of what: String, _ read: (inout TLSReader) throws -> T) throws(SyncError) -> T {
        do {
            var r = TLSReader(bytes)
            let value = try read(&r)
            try r.finish()
            return value
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(.invalidPayload, "a malformed \(what): \(error)")
        }
    }

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
