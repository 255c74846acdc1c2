import Crypto
import Foundation
import ImprintCRDT
import ImprintDelivery
import ImprintEncoding
import ImprintKeys
import ImprintMLS

/// One member of a shared document, as the MLS group has it.
public struct MemberInfo: Sendable, Hashable, Codable {
    public var did: String
    public var leafIndex: UInt32
    public var isAdmin: Bool
    public var isSelf: Bool
    /// When the Delivery Service added it, if it still lists it (a member who left is in the
    /// group until the next commit removes it).
    public var joinedAt: Date?
}

extension SharedDocument {
    // MARK: Inviting

    /// Adds `dids` in one commit: a key package per DID from the Delivery Service, each
    /// checked to belong to its DID; then a snapshot in the new epoch so they can read the
    /// document at once. Members who left are removed in the same commit. Admins only.
    /// Returns the DIDs added (those already members are skipped).
    @discardableResult
    public func invite(_ dids: [String]) async throws -> [String] {
        try await exclusive { try await inviteNow(dids) }
    }

    func inviteNow(_ dids: [String]) async throws -> [String] {
        try ensureActive()
        _ = try await pullNow()
        guard state.admins.contains(did) else {
            throw SyncError(.forbidden, "only admins (\(state.admins.joined(separator: ", "))) may add members")
        }
        let current = Set(try MemberCredential.roster(of: group).values)
        var seen = Set<String>()
        let newDIDs = dids.filter { !current.contains($0) && seen.insert($0).inserted }
        guard !newDIDs.isEmpty else { return [] }
        let fetched = try await keyPackages(for: newDIDs)
        guard fetched.missing.isEmpty else {
            throw SyncError(.noKeyPackage, "no key package on the Delivery Service for \(fetched.missing.joined(separator: ", ")) (they must run `imprint identity create` with this server)")
        }
        try await addNow(newDIDs, keyPackages: fetched.keyPackages)
        return newDIDs
    }

    /// One key package per DID from the Delivery Service (each handed out once), each checked
    /// to belong to its DID (credential and `did:key`); `missing`: DIDs with none left. Asked
    /// for in requests of `keyPackageRequestDIDs` DIDs (the service's limit per request).
    func keyPackages(for dids: [String]) async throws -> (keyPackages: [KeyPackage], missing: [String]) {
        var fetched = GetKeyPackagesOutput(keyPackages: [], missing: [])
        for start in stride(from: 0, to: dids.count, by: Self.keyPackageRequestDIDs) {
            let part = try await account.delivery.getKeyPackages(
                dids: Array(dids[start..<min(start + Self.keyPackageRequestDIDs, dids.count)]), cipherSuite: Int(SyncAccount.suite.rawValue))
            fetched.keyPackages += part.keyPackages
            fetched.missing += part.missing
        }
        let now = UInt64(Date().timeIntervalSince1970)
        var keyPackages: [KeyPackage] = []
        var missing: [String] = []
        for did in dids {
            if fetched.missing.contains(did) {
                missing.append(did)
                continue
            }
            guard let ref = fetched.keyPackages.first(where: { $0.did == did }) else {
                throw SyncError(.credentialMismatch, "the Delivery Service returned no usable key package for \(did)")
            }
            let keyPackage = try KeyPackage(published: Array(ref.keyPackage), cipherSuite: SyncAccount.suite)
            keyPackages.append(try MemberCredential.check(keyPackage, for: did, suite: SyncAccount.suite, now: now))
        }
        return (keyPackages, missing)
    }

    /// Adds `dids` (with their checked `keyPackages`, in the same order) in one commit, then
    /// sends the snapshot they start from.
    func addNow(_ dids: [String], keyPackages: [KeyPackage]) async throws {
        try await commit(addsMembers: true, proposals: { group in
            keyPackages.map { Proposal.add($0) } + (try await self.departedRemovals(group))
        }, send: { commit, welcome, epoch in
            guard let welcome else { throw SyncError(.invalidArgument, "the Add commit made no Welcome") }
            return try await self.account.delivery.addMembers(AddMembersInput(
                convoId: self.convoId, epoch: epoch, dids: dids, commit: Data(commit),
                welcome: Data(MLSMessage.welcome(welcome).tlsBytes))).seq
        })
        try await sendSnapshot()
    }

    /// DIDs per `getKeyPackages` request: the Delivery Service's limit.
    static let keyPackageRequestDIDs = 50

    // MARK: Removing and leaving

    /// Removes `member` in one commit: it can decrypt nothing sent after it, and the servers
    /// refuse it at once. Admins only, except for a member who left.
    public func remove(_ member: String) async throws {
        try await exclusive { try await removeNow(member) }
    }

    func removeNow(_ member: String) async throws {
        try ensureActive()
        _ = try await pullNow()
        guard member != did else { throw SyncError(.invalidArgument, "use leave to leave a document") }
        guard try MemberCredential.roster(of: group).values.contains(member) else {
            throw SyncError(.notMember, "\(member) is not a member of convo \(convoId)")
        }
        try await commit(addsMembers: false, proposals: { group in
            let roster = try MemberCredential.roster(of: group)
            guard let leaf = roster.first(where: { $0.value == member })?.key else { return [] }
            let others = try await self.departedRemovals(group).filter { if case .remove(leaf) = $0 { false } else { true } }
            return [.remove(leafIndex: leaf)] + others
        }, send: { commit, _, epoch in
            try await self.account.delivery.removeMember(RemoveMemberInput(convoId: self.convoId, epoch: epoch, did: member,
                                                                            commit: Data(commit))).seq
        })
    }

    /// Sends what is unsent, then leaves: the Delivery Service stops listing this identity at
    /// once (the next committer removes it from the MLS group) and its keys for the document
    /// are deleted. The bundle stays, with everything received so far.
    public func leave() async throws {
        try await exclusive {
            try ensureActive()
            _ = try await pushNow()
            try await account.delivery.leaveConvo(convoId: convoId)
            try endMembership("left convo \(convoId)")
            await withdrawInboxCapability()
        }
    }

    /// Rotates this member's leaf (post-compromise security) in a commit sent with
    /// `sendMessage`; members who left are removed in it too.
    public func update() async throws {
        try await exclusive { try await updateNow() }
    }

    func updateNow() async throws {
        try ensureActive()
        _ = try await pullNow()
        try await commit(addsMembers: false, forcePath: true, proposals: { group in try await self.departedRemovals(group) },
                         send: { commit, _, epoch in
            try await self.account.delivery.sendMessage(SendMessageInput(
                convoId: self.convoId, epoch: epoch, messageType: .commit, hash: Hex.encode(SHA256.hash(data: commit)),
                size: commit.count, commit: Data(commit))).seq
        })
    }

    /// Remove proposals for members still in the MLS group whom the Delivery Service no
    /// longer lists (they left).
    func departedRemovals(_ group: MLSGroup) async throws -> [Proposal] {
        guard let convo = try await account.delivery.getConvos().convos.first(where: { $0.id == convoId }),
              UInt64(exactly: convo.epoch) == group.epoch else { return [] }
        let active = Set(convo.members.map(\.did))
        return try MemberCredential.roster(of: group).filter { !active.contains($0.value) && $0.value != did }
            .sorted { $0.key < $1.key }.map { .remove(leafIndex: $0.key) }
    }

    /// Makes a commit and has the Delivery Service accept it. The resulting state waits in the
    /// key store (`<convo>#pending`) until it is accepted, so a crash in between is recovered
    /// by the next pull; a commit that loses the race for the epoch (409) is dropped, the
    /// winner's processed, and the commit rebuilt in the new epoch.
    func commit(addsMembers: Bool, forcePath: Bool = false,
                proposals: (MLSGroup) async throws -> [Proposal],
                send: ([UInt8], Welcome?, Int) async throws -> Int) async throws {
        try await inCurrentEpoch(or: "other members kept committing first") {
            try ensureNotStale()
            let list = try await proposals(group)
            guard !list.isEmpty || forcePath else { return }
            var next = group
            let output = try next.commit(list, options: CommitOptions(forcePath: forcePath))
            let bytes = output.commit.tlsBytes
            state.pendingCommitHash = Hex.encode(SHA256.hash(data: bytes))
            state.pendingCommitAdds = addsMembers
            try account.keyStore.saveGroupState(.init(state: next.serializedState(), cursor: ProcessedCursor(epoch: next.epoch, seq: 0)),
                                                convo: pendingConvo, for: account.identity.did)
            try saveState()
            do {
                let seq = try await send(bytes, output.welcome, Int(group.epoch))
                state.lastSentSeq = max(state.lastSentSeq, seq)
                group = next
                try finishOwnCommit(seq: seq, addedMembers: addsMembers)
                if addsMembers { state.snapshotOwed = true }
                try saveState()
            } catch let error as DeliveryServiceError where error.name == "EpochMismatch" {
                // Lost the race: this commit's state is of no use; rebuilt after catching up.
                state.pendingCommitHash = nil
                try account.keyStore.deleteGroup(convo: pendingConvo, for: account.identity.did)
                try saveState()
                throw error
            }
        }
    }

    // MARK: Reading the roster

    /// The members as the MLS group has them (each leaf's credential checked), with the
    /// Delivery Service's join times; and the epoch.
    public func members() async throws -> (epoch: UInt64, members: [MemberInfo]) {
        try reloadForReading()
        try ensureActive()
        let convo = try await account.delivery.getConvos().convos.first { $0.id == convoId }
        let joined = Dictionary((convo?.members ?? []).map { ($0.did, $0.joinedAt) }, uniquingKeysWith: { a, _ in a })
        let roster = try MemberCredential.roster(of: group)
        let members = roster.sorted { $0.key < $1.key }.map { leaf, member in
            MemberInfo(did: member, leafIndex: leaf, isAdmin: state.admins.contains(member), isSelf: member == did, joinedAt: joined[member])
        }
        return (group.epoch, members)
    }
}

extension SharedDocument {
    // MARK: Admins

    /// The DIDs that may add and remove members, the sharer first.
    public var admins: [String] { state.admins }

    /// Names the admins: `dids` (current members) may add and remove members from now on,
    /// beside the sharer, who alone may call this. Replaces the previous list; an empty one
    /// leaves the sharer alone. Returns the new list, the sharer first.
    ///
    /// Every member enforces the list on every commit it processes, and the Delivery Service
    /// on `addMembers`/`removeMember` (its `setAdmins`). The list goes to the group first, as an
    /// `admins` message (`AdminList`), then to the Delivery Service, so a new admin's first
    /// commit, which the service allows only after that, is sequenced after the message that
    /// names it; joiners get the list in the snapshot. Members take the message only from the
    /// sharer (and a snapshot's list only when it keeps the same sharer).
    ///
    /// Throws ``SyncError/Code/forbidden`` when this member is not the sharer, and
    /// ``SyncError/Code/notMember`` for a DID that is not a current member.
    @discardableResult
    public func setAdmins(_ dids: [String]) async throws -> [String] {
        try await exclusive {
            try ensureActive()
            _ = try await pullNow()
            guard let sharer = state.admins.first, sharer == did else {
                throw SyncError(.forbidden, "only the document's sharer (\(state.admins.first ?? "unknown")) names admins")
            }
            let members = Set(try currentRoster().keys)
            var seen: Set<String> = [did]
            let named = dids.filter { seen.insert($0).inserted }
            if let stranger = named.first(where: { !members.contains($0) }) {
                throw SyncError(.notMember, "\(stranger) is not a member of the document")
            }
            let list = [did] + named
            _ = try await send(SyncPayload(kind: .admins, body: AdminList(admins: list).encoded()), heads: [])
            state.admins = list
            try saveState()
            _ = try await account.delivery.setAdmins(SetAdminsInput(convoId: convoId, admins: named))
            return list
        }
    }

    /// Takes an admin list sent in the group, if its sender is the sharer (see ``setAdmins(_:)``).
    func adopt(_ list: AdminList, from author: String) {
        guard author == state.admins.first, list.admins.first == author else {
            state.alerts.append("an admin list from \(author), who is not the document's sharer, was ignored")
            return
        }
        state.admins = list.admins
    }
}
