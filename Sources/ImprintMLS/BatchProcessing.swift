extension MLSGroup {
    /// Processes `messages` in order, giving for each exactly the result that
    /// ``process(_:clock:)`` would give if called on them one by one (the same
    /// state afterwards, the same errors, every key deleted as it is used).
    ///
    /// A client catching up on its mailbox receives many application messages at
    /// once. Their decryption has to run in order (the secret tree ratchets), but
    /// the sender signatures, the bulk of the cost, are independent: runs of
    /// current-epoch application PrivateMessages are decrypted first, then their
    /// signatures are checked on every core. Any other message ends the run and is
    /// processed on its own.
    public mutating func process(batch messages: [MLSMessage], clock: MLSClock = .system) -> [Result<ProcessedMessage, any Error>] {
        var results = [Result<ProcessedMessage, any Error>?](repeating: nil, count: messages.count)
        // Decrypted, not yet verified: the signature input and what to return if it holds.
        var pending: [(index: Int, check: SignatureCheck, message: ProcessedMessage)] = []

        func verifyPending() {
            guard !pending.isEmpty else { return }
            let suite = cipherSuite
            let checks = pending.map(\.check)
            // The closure never throws: each check's outcome is kept on its own.
            let valid = (try? Parallel.map(checks.count) { i in (try? checks[i].isValid(suite: suite)) ?? false }) ?? []
            for (k, item) in pending.enumerated() {
                results[item.index] = k < valid.count && valid[k]
                    ? .success(item.message)
                    : .failure(MLSError(.signatureInvalid, "FramedContent signature"))
            }
            pending.removeAll(keepingCapacity: true)
        }

        for (i, message) in messages.enumerated() {
            guard case let .privateMessage(m) = message, m.epoch == epoch, m.contentType == .application else {
                verifyPending()
                results[i] = Result { try process(message, clock: clock) }
                continue
            }
            do {
                let t = tree
                // As in `process`: the key is consumed once the message opens.
                let ac = try MessageProtection.unprotectPrivate(suite: cipherSuite, m, groupID: groupID, epoch: epoch,
                                                                senderDataSecret: secrets.senderDataSecret, secretTree: &secretTree,
                                                                isMember: { t.leaf($0) != nil })
                // The checks of `process`, in its order; only the verification is deferred.
                let check = try senderSignatureCheck(ac)
                guard case let .member(leaf) = ac.content.sender, case let .application(data) = ac.content.content else {
                    throw MLSError(.invalidMessage, "application data must be a PrivateMessage from a member")
                }
                pending.append((i, check, .application(data: data, sender: leaf, authenticatedData: ac.content.authenticatedData)))
            } catch {
                results[i] = .failure(error)
            }
        }
        verifyPending()
        return results.map { $0! }
    }
}
