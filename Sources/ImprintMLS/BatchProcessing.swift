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
            let valid = (try? Parallel.map(checks.count) { i in
                (try? suite.verifyWithLabel(publicKey: checks[i].publicKey, label: "FramedContentTBS",
                                            content: checks[i].content, signature: checks[i].signature)) ?? false
            }) ?? []
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
                guard case let .member(leaf) = ac.content.sender else {
                    throw MLSError(.invalidMessage, "application data must be a PrivateMessage from a member")
                }
                guard let sender = tree.leaf(leaf) else { throw MLSError(.invalidMessage, "sender leaf \(leaf) is blank") }
                guard case let .application(data) = ac.content.content else {
                    throw MLSError(.invalidMessage, "content type differs from the PrivateMessage's")
                }
                let check = SignatureCheck(
                    publicKey: sender.signatureKey, signature: ac.auth.signature,
                    content: MessageProtection.framedContentTBS(wireFormat: ac.wireFormat, content: ac.content, context: context))
                pending.append((i, check, .application(data: data, sender: leaf, authenticatedData: ac.content.authenticatedData)))
            } catch {
                results[i] = .failure(error)
            }
        }
        verifyPending()
        return results.map { $0! }
    }
}

/// One signature to verify, as plain bytes (so it can cross threads).
struct SignatureCheck: Sendable {
    var publicKey: [UInt8]
    var signature: [UInt8]
    var content: [UInt8]
}
