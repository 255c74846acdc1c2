import Foundation
import ImprintCRDT
import ImprintDelivery
import ImprintBundle
import ImprintEncoding
import ImprintKeys
import ImprintMLS
import ImprintStore

extension SharedDocument {
    /// Joins convo `convoId` from the Welcome the Delivery Service holds for this identity and
    /// materializes the document into a new bundle at `path`.
    ///
    /// A member added in epoch N cannot decrypt anything older, so the document comes from
    /// the snapshot the inviter sent in epoch N (plus any change sets of N before it). Every
    /// leaf of the tree the Welcome carries is checked (credential names a `did:key` whose
    /// key signs for it). Nothing is saved until the bundle holds the document: a join that
    /// fails half way can simply be run again (the Welcome and the key package are consumed
    /// only at the end). Throws ``SyncError/Code/noWelcome`` when there is no Welcome yet.
    public static func join(convoId: String, account: SyncAccount, bundleAt path: String, device: DeviceID) async throws -> SharedDocument {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw SyncError(.invalidArgument, "\(path) already exists; join into a new path")
        }
        guard let welcomed = try await groupFromWelcome(convoId: convoId, account: account) else {
            throw SyncError(.noWelcome, "no Welcome for \(account.did) in convo \(convoId) (not invited yet, or already joined)")
        }
        var group = welcomed.group
        let joinedEpoch = group.epoch

        // Read the join epoch's messages, in memory, up to its snapshot.
        var staged: [Change] = []
        var stagedAssets: [(entries: [AttachmentAnnouncement.Entry], author: String)] = []
        var snapshot: SnapshotContent?
        var lastSeq = 0
        var since = 0
        scan: while snapshot == nil {
            let page = try await account.delivery.getMessages(convoId: convoId, sinceSeq: since, limit: 1000)
            for message in try checked(page, after: since) {
                since = message.seq
                if UInt64(message.epoch) < group.epoch { lastSeq = message.seq; continue }
                if message.messageType == .commit {
                    guard let bytes = message.commit else { throw SyncError(.missingCommit, "seq \(message.seq) has no commit bytes") }
                    guard case .commit = try group.process(try MLSMessage(tlsBytes: Array(bytes))) else {
                        throw SyncError(.invalidPayload, "seq \(message.seq) is not a commit")
                    }
                    _ = try MemberCredential.roster(of: group)
                    lastSeq = message.seq
                    continue
                }
                guard message.sender != account.did,
                      let ciphertext = try await fetchPayload(seq: message.seq, convoId: convoId, account: account) else { break scan }
                guard case let .application(data, sender, _) = try group.process(try MLSMessage(tlsBytes: ciphertext)) else {
                    throw SyncError(.invalidPayload, "seq \(message.seq) is not an application message")
                }
                if SyncPayload.unknownKind(in: data) != nil {
                    lastSeq = message.seq  // a newer member's kind of message: skipped
                    continue
                }
                let payload = try SyncPayload(decoding: data)
                switch payload.kind {
                case .changes: staged += try ChangeSet.decode(payload.body, maximumBytes: account.options.maximumPayloadBytes)
                case .snapshot: snapshot = try SnapshotContent(decoding: payload.body)
                case .assets:
                    let author = try MemberCredential.roster(of: group)[sender] ?? message.sender
                    stagedAssets.append((try AttachmentAnnouncement(decoding: payload.body).entries, author))
                case .syncRequest, .syncReply, .admins:
                    // Between other members, about changes or a policy the snapshot carries.
                    break
                }
                lastSeq = message.seq
                if snapshot != nil { break scan }
            }
            if page.cursor == nil || page.messages.isEmpty { break }
        }
        guard let snapshot else {
            throw SyncError(.noWelcome, "the inviter's snapshot of the document is not in the zone yet; try again shortly")
        }
        let document = try Document.load(snapshot.document)
        try document.apply(staged)
        let bundle = try DocumentBundle.create(at: path, device: device, adopting: document, documentID: snapshot.documentID)
        _ = try bundle.store.updateMetadata { metadata in
            metadata.extra[Self.metadataKey] = .object(["convoId": .string(convoId), "server": .string(account.serverURL)])
        }
        let shared = try document.heads(of: (snapshot.heads + staged.map(\.hash)).filter { document.contains($0) })
        var state = SyncState(convoId: convoId, did: account.did, serverURL: account.serverURL, serviceDID: account.delivery.serviceDID,
                              bundlePath: bundle.store.layout.root, sharedHeads: shared.map(\.hex), joinedEpoch: joinedEpoch,
                              admins: snapshot.admins)
        state.mailboxThreshold = snapshot.mailboxThreshold
        state.currentStateOnly = snapshot.currentStateOnly
        let doc = SharedDocument(account: account, bundle: bundle, group: group,
                                 cursor: ProcessedCursor(epoch: group.epoch, seq: UInt64(lastSeq)), state: state)
        await doc.rememberAuthenticatorNow()
        for announcement in stagedAssets { try await doc.remember(announced: announcement.entries, by: announcement.author) }
        try await doc.saveGroup()
        try await doc.saveState()
        // Joined for good: the key package's private keys go (forward secrecy), and the Welcome.
        try account.keyStore.deleteKeyPackagePrivateKey(reference: welcomed.reference, for: account.identity.did)
        try await account.delivery.confirmWelcome(convoId: convoId)
        try await doc.exclusive { _ = try await doc.pullNow() }
        try await account.topUpKeyPackages()
        return doc
    }

    func rememberAuthenticatorNow() {
        rememberAuthenticator()
    }

    /// The group the Welcome waiting for this identity in `convoId` starts, and the reference
    /// of the key package it was made for; nil when no Welcome waits. Every leaf of the tree
    /// it carries is checked (credential names a `did:key` whose key signs for it). Nothing
    /// is consumed: the caller deletes the key package's private keys and confirms the
    /// Welcome once the membership is saved.
    static func groupFromWelcome(convoId: String, account: SyncAccount) async throws -> (group: MLSGroup, reference: [UInt8])? {
        let welcomeBytes: Data
        do {
            welcomeBytes = try await account.delivery.getWelcome(convoId: convoId).welcome
        } catch let error as DeliveryServiceError where error.status == 404 {
            return nil
        }
        guard case let .welcome(welcome) = try MLSMessage(tlsBytes: Array(welcomeBytes)) else {
            throw SyncError(.invalidPayload, "the Delivery Service's Welcome is not an MLS Welcome")
        }
        var found: (stored: StoredKeyPackage, reference: [UInt8])?
        for secret in welcome.secrets {
            if let stored = try account.storedKeyPackage(reference: secret.newMember) {
                found = (stored, secret.newMember)
                break
            }
        }
        guard let found else {
            throw SyncError(.noKeyPackage, "the Welcome is for none of this identity's key packages (was the home restored from a backup?)")
        }
        let group = try MLSGroup.join(welcome: welcome, keyPackage: found.stored.keyPackage,
                                      privateKeys: found.stored.privateKeys(signatureKey: account.signaturePrivateKey))
        guard Hex.encode(group.groupID) == convoId else {
            throw SyncError(.invalidPayload, "the Welcome is for group \(Hex.encode(group.groupID)), not \(convoId)")
        }
        _ = try MemberCredential.roster(of: group)
        return (group, found.reference)
    }
}
