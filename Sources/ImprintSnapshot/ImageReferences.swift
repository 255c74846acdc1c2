/// Images a Markdown body names, and the image types a snapshot inlines.
enum ImageReferences {
    /// The targets of every `![alt](target)` in `text`, in order (the viewer resolves a target
    /// to an asset by file name, by hash, or by `assets/<hash>`).
    static func targets(in text: String) -> [String] {
        var out: [String] = []
        var rest = Substring(text)
        while let bang = rest.range(of: "![") {
            rest = rest[bang.upperBound...]
            guard let close = rest.range(of: "]("), let end = rest[close.upperBound...].firstIndex(of: ")") else { continue }
            let alt = rest[..<close.lowerBound]
            guard !alt.contains("\n") else { continue }
            let target = rest[close.upperBound..<end]
            if !target.isEmpty, !target.contains("\n") { out.append(String(target)) }
            rest = rest[end...]
        }
        return out
    }

    /// The MIME type from the first bytes, for the image types every browser shows; nil for
    /// anything else (never trusted from a file name).
    static func mimeType(of bytes: [UInt8]) -> String? {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && Array(bytes[offset..<(offset + prefix.count)]) == prefix
        }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if starts([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return "image/gif" }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return "image/webp" }
        return nil
    }
}
