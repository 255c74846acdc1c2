extension Document {
    /// What a document loaded from a redacted save holds in place of each deleted
    /// character whose content the save dropped: U+001A SUBSTITUTE (one byte of UTF-8).
    ///
    /// The current text never shows it (those characters are deleted); views of versions
    /// before the save (``text(_:at:)``, ``fork(at:actor:)``, diffs) do, one per character,
    /// where the original showed the character itself.
    public static let redactedCharacter: Character = "\u{1A}"
    static let redactedByte: UInt8 = 0x1A

    /// Whether this document holds redacted changes: it was loaded from a save written
    /// with ``HistoryRetention/redacted`` in which some content was deleted (or merged one into
    /// an empty document). Such a document reads, edits and merges as any other, but it
    /// cannot write a full save, and it never hands its redacted changes to anyone (see
    /// ``allChanges()``).
    public var hasRedactedHistory: Bool {
        if deferredLoad != nil { completeDeferredLoad() }
        return !redactedRecords.isEmpty
    }

    /// The document in the binary format, with its whole history or with the content of
    /// deleted text dropped (`docs/format.md`, "Redacted documents").
    ///
    /// `.redacted` writes format version 4: the structure of every change stays, so the
    /// loaded copy merges with any change exactly as this document does, but no byte of
    /// deleted text is in it. `.full` is ``save()``; a document that holds redacted changes
    /// (``hasRedactedHistory``) has no full history to write and throws
    /// ``CRDTError/Code/redactedHistory`` (its ``save()`` writes a redacted save).
    ///
    /// ```swift
    /// let snapshot = try doc.save(history: .redacted) // for a member who joins now
    /// ```
    public func save(history: HistoryRetention) throws -> [UInt8] {
        switch history {
        case .full:
            if hasRedactedHistory {
                throw CRDTError(.redactedHistory, "the document holds redacted changes: it cannot write a full save")
            }
            return save()
        case .redacted:
            return saveRedacted()
        }
    }

    /// A version 4 save (see ``save(history:)``).
    func saveRedacted() -> [UInt8] {
        openRecord = nil
        savedRecordCount = records.count
        if let unloadable = unloadablePayload { return DocumentFormat.frame(unloadable.payload, version: unloadable.version) }
        // The changes whose deleted text is dropped now, and those redacted already (a fork of
        // a redacted document can show their text, as placeholders, at an older version).
        let owners = Set(ownersOfDeletedContent()).union(redactedRecords).sorted()
        var redacted: [(record: Int, hash: ChangeHash)] = []
        redacted.reserveCapacity(owners.count)
        for i in owners {
            seal(i)
            redacted.append((i, records[i].hash!))
        }
        let (payload, version) = encodePayload(visibleTextFirst: true, redacted: redacted)
        return DocumentFormat.frame(payload, version: version)
    }

    /// The changes that inserted a character, or a scalar list item, that is now deleted,
    /// in history order: the changes a redacted save cannot reproduce.
    func ownersOfDeletedContent() -> [Int] {
        let ranges = ChangeRanges(actorCount: actors.count, changes: records.indices) {
            (records[$0].actor, records[$0].startOp, records[$0].maxOp)
        }
        var owners = [Bool](repeating: false, count: records.count)
        for state in objects.values {
            guard case .sequence(let s) = state else { continue }
            // Every item lies inside a change of its actor (inserted by it).
            _ = Document.markOwners(ofDeletedContentIn: s, ranges: ranges, into: &owners)
        }
        return owners.indices.filter { owners[$0] }
    }

    /// Sets `owners[i]` for every change `i` that inserted an item whose content a redacted
    /// save drops: a character of a deleted span of text, or an item of a deleted span of a
    /// list whose inserted value is a scalar (`ranges` locate changes by op id). False if
    /// such an item lies outside every change. O(spans + changes found + deleted list items).
    static func markOwners(ofDeletedContentIn s: SequenceState, ranges: ChangeRanges, into owners: inout [Bool]) -> Bool {
        var hints = [Int](repeating: 0, count: ranges.actorCount)
        func mark(_ actor: Int32, _ range: Range<Int>) -> Bool {
            var c = range.lowerBound
            while c < range.upperBound {
                guard let found = ranges.locate(actor: actor, counter: c, hint: &hints[Int(actor)]) else { return false }
                owners[found.record] = true
                c = found.end + 1
            }
            return true
        }
        for leaf in s.leaves {
            for sp in leaf.spans where sp.deleted {
                if s.isText {
                    guard mark(sp.id.actor, sp.id.counter..<sp.id.counter + sp.length) else { return false }
                    continue
                }
                for k in 0..<sp.length {
                    guard case .scalar = s.initialValues[sp.contentStart + k] else { continue }
                    guard mark(sp.id.actor, sp.id.counter + k..<sp.id.counter + k + 1) else { return false }
                }
            }
        }
        return true
    }

    /// The changes of `indices` that may be handed to other replicas: all but the redacted
    /// ones, whose content is gone (sending placeholder content under the original hash
    /// would forge the change).
    func portableChanges(_ indices: some Sequence<Int>) -> [Change] {
        if redactedRecords.isEmpty { return indices.map(portableChange) }
        return indices.filter { !redactedRecords.contains($0) }.map(portableChange)
    }

    /// Record `i` for replaying into a view of a past version (``fork(at:actor:)``): its
    /// portable form, or for a redacted change its ops as this document holds them
    /// (deleted text as ``redactedCharacter``) under its original hash. Only for forks,
    /// which mark such changes redacted in turn (see ``markRedacted(_:)``).
    func replayableChange(_ i: Int) -> Change {
        guard redactedRecords.contains(i) else { return portableChange(i) }
        let r = records[i]
        let bytes = ChangeCoding.encode(r, depHashes: r.deps.map { records[$0].hash! }) { actors[Int($0)] }
        return Change(decoded: try! ChangeCoding.decode(bytes), bytes: bytes, hash: r.hash!)
    }

    /// Marks the changes `hashes` (those this document holds) as redacted: a fork of a
    /// redacted document keeps them from being sent on, as its source does.
    func markRedacted(_ hashes: some Sequence<ChangeHash>) {
        for h in hashes {
            if let i = recordByHash[h] { redactedRecords.insert(i) }
        }
    }
}
