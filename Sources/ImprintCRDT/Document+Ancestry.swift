extension Document {
    /// Seals every change and rebuilds loaded insert ops, so each record has a hash and bytes.
    func prepareHistory() {
        materializeInserts()
        sealAll()
    }

    /// Which records are ancestors of (or equal to) the records `roots`, as a mask over
    /// `records`. Dependencies always precede their dependents in `records`, so one
    /// backwards pass suffices: O(history).
    func ancestryMask(_ roots: some Sequence<Int>) -> [Bool] {
        var mask = [Bool](repeating: false, count: records.count)
        var top = -1
        for r in roots {
            mask[r] = true
            top = max(top, r)
        }
        var i = top
        while i >= 0 {
            if mask[i] { for d in records[i].deps { mask[d] = true } }
            i -= 1
        }
        return mask
    }

    /// Record indices of `hashes`; throws `.unknownHeads` naming the first unknown one.
    func recordIndices(_ hashes: [ChangeHash]) throws -> [Int] {
        prepareHistory()
        return try hashes.map { h in
            guard let i = recordByHash[h] else { throw CRDTError(.unknownHeads, "unknown change \(h)") }
            return i
        }
    }

    /// The portable form of record `i` (which must be sealed, and not redacted: hand changes
    /// out through `portableChanges`).
    func portableChange(_ i: Int) -> Change {
        let r = records[i]
        // Our own canonical encoding always decodes.
        return Change(decoded: try! ChangeCoding.decode(r.bytes!), bytes: r.bytes!, hash: r.hash!)
    }
}

extension Document {
    /// The heads of the version made of `hashes` and everything they depend on: the hashes
    /// among them that no other one of them has as an ancestor, sorted. Known changes only
    /// (throws ``CRDTError/Code/unknownHeads`` naming the first unknown one).
    ///
    /// A replica that tracks "what the group has seen" joins its previous heads with the
    /// changes it just received and keeps the result small:
    /// ```swift
    /// seen = try doc.heads(of: seen + received.map(\.hash))
    /// let unsent = doc.changes(since: seen) // what only this replica holds
    /// ```
    public func heads(of hashes: [ChangeHash]) throws -> [ChangeHash] {
        let indices = Array(Set(try recordIndices(hashes)))
        let covered = ancestryMask(indices.flatMap { records[$0].deps })
        return indices.filter { !covered[$0] }.map { records[$0].hash! }.sorted()
    }
}

extension Document {
    /// Whether the change `hash` is applied in this document (a change still waiting for its
    /// dependencies is not).
    public func contains(_ hash: ChangeHash) -> Bool {
        if recordByHash.count < records.count { sealAll() }
        return recordByHash[hash] != nil
    }

    /// The hashes of every change this document holds, in history order (dependencies
    /// first), redacted changes included: what a save of it covers. ``allChanges()`` gives
    /// the same but for redacted changes (see ``hasRedactedHistory``), so a store that records
    /// which changes a saved snapshot covers reads them here.
    public var changeHashes: [ChangeHash] {
        sealAll()
        return records.map { $0.hash! }
    }
}
