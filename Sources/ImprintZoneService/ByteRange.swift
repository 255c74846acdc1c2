/// One `Range: bytes=…` request (RFC 9110 §14.1.2). Multiple ranges or other units parse as
/// nil and are ignored (the whole asset is served, as the RFC allows).
struct ByteRange: Sendable, Equatable {
    enum Form: Equatable {
        case from(Int, through: Int?)
        case suffix(Int)
    }

    let form: Form

    init?(header: String) {
        guard header.hasPrefix("bytes="), header.utf8.count <= 64 else { return nil }
        let spec = header.dropFirst(6).trimmingPrefixSpaces()
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash], last = spec[spec.index(after: dash)...]
        func number(_ text: Substring) -> Int? {
            guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
            return Int(text)
        }
        if first.isEmpty {
            guard let count = number(last) else { return nil }
            form = .suffix(count)
        } else {
            guard let start = number(first) else { return nil }
            if last.isEmpty {
                form = .from(start, through: nil)
            } else {
                guard let end = number(last), end >= start else { return nil }
                form = .from(start, through: end)
            }
        }
    }

    /// The bytes to send of an asset of `size` bytes; nil when unsatisfiable (416).
    func resolve(size: Int) -> Range<Int>? {
        switch form {
        case .from(let start, let end):
            guard start < size else { return nil }
            return start..<(min(end ?? (size - 1), size - 1) + 1)
        case .suffix(let count):
            guard count > 0, size > 0 else { return nil }
            return max(0, size - count)..<size
        }
    }
}

private extension Substring {
    func trimmingPrefixSpaces() -> Substring { drop(while: { $0 == " " }) }
}
