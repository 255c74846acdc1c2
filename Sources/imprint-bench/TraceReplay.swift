import EditingTraces
import ImprintCRDT

/// Replays editing traces into documents the way the benchmark contract defines.
enum TraceReplay {
    /// A sequential trace as local edits, one transaction per trace transaction; a
    /// concurrent trace on forks at each transaction's parents, merged.
    static func replay(_ trace: EditingTrace) throws -> Document {
        let doc = Document(actor: ActorID.named("trace-author-0"))
        let text = try doc.change { tx in try tx.put(.root, "text", .text)! }
        for txn in trace.transactions {
            try doc.change { tx in
                for p in txn.patches {
                    try tx.splice(text, at: p.position, delete: p.deleteCount, insert: p.insert)
                }
            }
        }
        return doc
    }

    static func text(of doc: Document) throws -> String {
        guard case .object(let id, .text)? = try doc.get(.root, "text") else { return "" }
        return try doc.text(id)
    }
}
