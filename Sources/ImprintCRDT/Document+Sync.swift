extension Document {
    /// The next message to send to the peer `state` describes, or nil when there is
    /// nothing to say (in sync, or waiting for the peer's answer).
    ///
    /// Call it after every ``receiveSyncMessage(_:_:)`` and after local changes; deliver
    /// the bytes to the peer in order. See `docs/sync-protocol.md`.
    public func generateSyncMessage(_ state: inout SyncState) -> [UInt8]? {
        prepareHistory()
        let ourHeads = currentHeads
        let ourNeed = missingDependencies(state.theirHeads ?? [])
        let theirHeads = Set(state.theirHeads ?? [])
        var ourHave: [SyncMessage.Have] = []
        if ourNeed.allSatisfy(theirHeads.contains) {
            // A restored state may name changes this document no longer has: summarise from
            // the part we do have, so the peer does not assume we hold the rest.
            ourHave = [have(since: state.sharedHeads.filter { recordByHash[$0] != nil })]
        }

        // The peer summarised from a point we do not know (we lost data, or it is ahead of
        // us in a way we cannot use): ask it to start over from nothing.
        if let first = state.theirHave?.first, !first.lastSync.allSatisfy({ recordByHash[$0] != nil }) {
            let reset = SyncMessage(
                heads: ourHeads, need: [], have: [.init(lastSync: [], bloom: BloomFilter(capacity: 0))], changes: [])
            return reset.encode()
        }

        var toSend: [Change] = []
        if let have = state.theirHave, let need = state.theirNeed {
            toSend = changesToSend(have: have, need: need, shared: state.sharedHeads, sent: state.sentHashes)
        }

        let headsUnchanged = state.lastSentHeads == ourHeads
        let headsEqual = state.theirHeads == ourHeads
        if headsUnchanged && state.haveResponded {
            if headsEqual && toSend.isEmpty { return nil }
            if state.inFlight { return nil }
        }
        // Nothing goes twice in one session: a request for a change already sent is for one
        // still in flight (a lost message ends the session; see docs/sync-protocol.md).
        toSend.removeAll { state.sentHashes.contains($0.hash) }
        state.lastSentHeads = ourHeads
        state.haveResponded = true
        state.inFlight = true
        for c in toSend { state.sentHashes.insert(c.hash) }
        return SyncMessage(heads: ourHeads, need: ourNeed, have: ourHave, changes: toSend).encode()
    }

    /// Applies a message from the peer `state` describes: its changes go into the
    /// document, its heads and summaries into `state`. Malformed or hostile bytes throw
    /// ``CRDTError`` (the document keeps every change applied before the bad one).
    public func receiveSyncMessage(_ state: inout SyncState, _ message: [UInt8]) throws {
        try completeLoad()
        let msg = try SyncMessage(decoding: message)
        state.inFlight = false
        prepareHistory()
        let before = currentHeads
        if !msg.changes.isEmpty {
            try apply(msg.changes)
            let after = currentHeads
            let beforeSet = Set(before)
            let afterSet = Set(after)
            let advanced = after.filter { !beforeSet.contains($0) } + state.sharedHeads.filter(afterSet.contains)
            state.sharedHeads = Array(Set(advanced)).sorted()
        } else if msg.heads == before {
            state.lastSentHeads = msg.heads
        }
        let known = msg.heads.filter { recordByHash[$0] != nil }
        if known.count == msg.heads.count {
            state.sharedHeads = msg.heads
            if msg.heads.isEmpty {
                // The peer has nothing: whatever we sent before did not stick.
                state.lastSentHeads = []
                state.sentHashes = []
            }
        } else {
            state.sharedHeads = Array(Set(known + state.sharedHeads)).sorted()
        }
        state.theirHave = msg.have
        state.theirHeads = msg.heads
        state.theirNeed = msg.need
    }

    /// Hashes we know we lack: unknown `heads`, and dependencies of waiting changes that
    /// are neither applied nor waiting themselves. Sorted.
    func missingDependencies(_ heads: [ChangeHash]) -> [ChangeHash] {
        var missing = Set<ChangeHash>()
        for p in pending.values {
            for d in p.deps where recordByHash[d] == nil && pending[d] == nil { missing.insert(d) }
        }
        for h in heads where recordByHash[h] == nil && pending[h] == nil { missing.insert(h) }
        return missing.sorted()
    }

    /// A Bloom filter of every change not reachable from `lastSync` (which we must know).
    private func have(since lastSync: [ChangeHash]) -> SyncMessage.Have {
        let mask = ancestryMask(lastSync.compactMap { recordByHash[$0] })
        let hashes = records.indices.filter { !mask[$0] }.map { records[$0].hash! }
        return .init(lastSync: lastSync, bloom: BloomFilter(hashes))
    }

    /// The changes the peer lacks, judged from its summaries and explicit requests, in
    /// history order. O(history).
    ///
    /// Sent: every change since the filters' last-sync heads that no filter claims, and
    /// every change depending on one of those (the peer could not apply it otherwise, so a
    /// claim on it was a false positive). For each change the peer asks for that we have
    /// not sent, that change and its ancestors not known to be shared: the request proves
    /// a filter lied (or the peer has a gap), and the same filter may have lied about the
    /// ancestors, so one request round settles all.
    private func changesToSend(
        have: [SyncMessage.Have], need: [ChangeHash], shared: [ChangeHash], sent: Set<ChangeHash>
    ) -> [Change] {
        var send = [Bool](repeating: false, count: records.count)
        var any = false
        if !have.isEmpty {
            let mask = ancestryMask(have.flatMap(\.lastSync).compactMap { recordByHash[$0] })
            for i in records.indices where !mask[i] {
                let h = records[i].hash!
                if !have.contains(where: { $0.bloom.contains(h) }) || records[i].deps.contains(where: { send[$0] }) {
                    send[i] = true
                    any = true
                }
            }
        }
        // A request for a change already sent crossed it in flight: nothing to infer.
        let asked = need.filter { !sent.contains($0) }.compactMap { recordByHash[$0] }
        if !asked.isEmpty {
            let known = ancestryMask(shared.compactMap { recordByHash[$0] } + have.flatMap(\.lastSync).compactMap { recordByHash[$0] })
            let wanted = ancestryMask(asked)
            for i in records.indices where wanted[i] && !known[i] {
                send[i] = true
                any = true
            }
            for i in asked { send[i] = true }
            any = true
        }
        guard any else { return [] }
        // Redacted changes are never sent (`portableChanges`): the peer gets them from a
        // holder of the full history.
        return portableChanges(records.indices.filter { send[$0] })
    }
}
