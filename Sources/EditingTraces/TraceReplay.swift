import ImprintCRDT

/// Replays editing traces into documents the way the benchmark contract defines.
public enum TraceReplay {
    /// A sequential trace as local edits (one transaction per trace transaction), or a
    /// concurrent trace as forks at each transaction's parents, merged.
    /// `changePerTransaction` keeps a sequential trace's transactions apart (one change
    /// each) instead of letting the document coalesce them.
    public static func replay(_ trace: EditingTrace, changePerTransaction: Bool = false) throws -> Document {
        trace.isConcurrent ? try replayConcurrent(trace) : try replaySequential(trace, changePerTransaction: changePerTransaction)
    }

    static func replaySequential(_ trace: EditingTrace, changePerTransaction: Bool) throws -> Document {
        let doc = Document(actor: ActorID.named("trace-author-0"))
        doc.coalescesLocalChanges = !changePerTransaction
        let text = try doc.change { tx in try tx.put(.root, "text", .text)! }
        var reader = trace.transactionReader()
        while reader.hasNext {
            try doc.change { tx in
                try reader.readTransaction { pos, del, ins in
                    try tx.splice(text, at: pos, delete: del, insert: ins)
                }
            }
        }
        return doc
    }

    /// Each agent edits its own replica. Before a transaction, the agent's replica receives
    /// exactly the transactions in its parents' history that it lacks; every transaction is
    /// one change. The result merges every change into a fresh document.
    static func replayConcurrent(_ trace: EditingTrace) throws -> Document {
        let root = Document(actor: ActorID.named("trace-root"))
        let text = try root.change { tx in try tx.put(.root, "text", .text)! }
        let base = root.allChanges()
        var replicas: [Int: Document] = [:]
        var applied: [Int: Set<Int>] = [:]
        var changeOf: [Change?] = Array(repeating: nil, count: trace.transactionCount)
        var reader = trace.transactionReader()
        for t in 0..<trace.transactionCount {
            let agent = trace.agent(of: t)
            if replicas[agent] == nil {
                let d = Document(actor: ActorID.named("trace-agent-\(agent)"))
                d.coalescesLocalChanges = false
                try d.apply(base)
                replicas[agent] = d
                applied[agent] = []
            }
            let doc = replicas[agent]!
            // Transactions in the parents' history this replica has not seen, oldest first.
            var missing: [Int] = []
            // Taken out of the dictionary so the insertions below do not copy the set.
            var seen = applied.removeValue(forKey: agent)!
            var stack = trace.parents(of: t)
            var order: [Int] = []
            while let p = stack.popLast() {
                if seen.contains(p) { continue }
                seen.insert(p)
                order.append(p)
                stack.append(contentsOf: trace.parents(of: p))
            }
            missing = order.sorted()
            try doc.apply(missing.map { changeOf[$0]! })
            try doc.change { tx in
                try reader.readTransaction { pos, del, ins in
                    try tx.splice(text, at: pos, delete: del, insert: ins)
                }
            }
            changeOf[t] = doc.lastLocalChange
            seen.insert(t)
            applied[agent] = seen
        }
        let result = Document(actor: ActorID.named("trace-merge"))
        try result.apply(base + changeOf.compactMap { $0 })
        return result
    }

    /// The `text` object's content.
    public static func text(of doc: Document) throws -> String {
        guard case .object(let id, .text)? = try doc.get(.root, "text") else { return "" }
        return try doc.text(id)
    }
}
