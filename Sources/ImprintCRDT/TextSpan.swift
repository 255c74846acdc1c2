/// A run of text whose characters all carry the same marks; ``Document/spans(_:)`` cuts a
/// text into these.
///
/// ```swift
/// for span in try doc.spans(body) {
///     let bold = span.marks.contains { $0.name == "bold" }
///     print(bold ? "**\(span.text)**" : span.text, terminator: "")
/// }
/// ```
public struct TextSpan: Hashable, Sendable, CustomStringConvertible {
    public var text: String
    /// Sorted (``Mark`` is `Comparable`); empty for plain text.
    public var marks: [Mark]

    public init(_ text: String, marks: [Mark] = []) {
        self.text = text
        self.marks = marks
    }

    public var description: String {
        marks.isEmpty ? "\"\(text)\"" : "\"\(text)\" \(marks)"
    }
}
