/// Why `LEB128.readUnsigned` refused its input. Callers map it to their module's error.
public struct LEB128Error: Error, Sendable, Hashable, CustomStringConvertible {
    @usableFromInline
    enum Code: Sendable, Hashable {
        case truncated, overflow, nonMinimal, tooLong
    }

    @usableFromInline let code: Code

    @usableFromInline
    init(_ code: Code) { self.code = code }

    /// The input ended inside the number.
    public static var truncated: LEB128Error { .init(.truncated) }
    /// The tenth byte carries bits beyond 64.
    public static var overflow: LEB128Error { .init(.overflow) }
    /// A trailing zero group: a longer spelling of a shorter number.
    public static var nonMinimal: LEB128Error { .init(.nonMinimal) }
    /// More than ten bytes.
    public static var tooLong: LEB128Error { .init(.tooLong) }

    public var description: String {
        switch code {
        case .truncated: "unexpected end of data"
        case .overflow: "varint overflows 64 bits"
        case .nonMinimal: "non-minimal varint"
        case .tooLong: "varint too long"
        }
    }
}
