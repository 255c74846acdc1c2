/// A fault of the PostgreSQL store itself, not a rule violation: the database answered in a
/// shape this code does not expect (for instance a schema function from a newer version).
/// It surfaces as a 500 `InternalError`, and is logged with its code and detail.
struct PostgresStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    var code: String
    var detail: String

    /// A statement that must return one well-formed row did not.
    static func noResult(_ detail: String) -> Self { .init(code: "noResult", detail: detail) }

    var description: String { "PostgresStoreError.\(code): \(detail)" }
}
