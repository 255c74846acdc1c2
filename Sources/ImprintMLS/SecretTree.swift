/// Which ratchet of a leaf a key comes from.
enum RatchetType: UInt8, Sendable, Hashable, Codable {
    case handshake = 0, application = 1
}

/// Limits applied to a secret tree's hash ratchets.
public struct SecretTreeLimits: Sendable, Hashable, Codable {
    /// Largest accepted jump ahead of the current generation of a ratchet.
    public var maxForwardDistance: UInt32
    /// Largest number of skipped (out-of-order) keys retained per ratchet.
    public var maxSkippedKeys: Int

    public init(maxForwardDistance: UInt32 = 1000, maxSkippedKeys: Int = 256) {
        self.maxForwardDistance = maxForwardDistance
        self.maxSkippedKeys = maxSkippedKeys
    }
}

/// A key and nonce for one generation of a ratchet.
struct RatchetKey: Sendable, Hashable, Codable {
    var generation: UInt32
    var key: [UInt8]
    var nonce: [UInt8]
}

/// One per-leaf hash ratchet (RFC 9420 §9.1). Consumed keys are deleted.
struct HashRatchet: Sendable, Hashable, Codable {
    /// Secret for `generation`, not yet used.
    var secret: [UInt8]
    var generation: UInt32
    /// Keys of generations skipped over, kept for out-of-order delivery.
    var skipped: [UInt32: RatchetKey] = [:]
    /// Insertion order of `skipped`, to evict the oldest.
    var skippedOrder: [UInt32] = []
    /// True once generation 2^32-1 has been used.
    var exhausted = false

    private static let keyLabel = Array("key".utf8), nonceLabel = Array("nonce".utf8), secretLabel = Array("secret".utf8)

    /// The key and nonce of the current generation; then the secret is
    /// replaced by the next one (the old one is dropped). One HMAC keying
    /// of the secret serves all three DeriveTreeSecret calls.
    mutating func keyAndAdvance(_ suite: CipherSuite) throws -> RatchetKey {
        try suite.requireSupported()
        let keyed = KeyedHMAC(key: secret)
        let context = [UInt8(generation >> 24), UInt8((generation >> 16) & 0xff), UInt8((generation >> 8) & 0xff), UInt8(generation & 0xff)]
        let k = RatchetKey(generation: generation,
                           key: suite.expandWithLabel(keyed: keyed, label: HashRatchet.keyLabel, context: context, length: suite.aeadKeyLength),
                           nonce: suite.expandWithLabel(keyed: keyed, label: HashRatchet.nonceLabel, context: context, length: suite.aeadNonceLength))
        secret = suite.expandWithLabel(keyed: keyed, label: HashRatchet.secretLabel, context: context, length: suite.hashLength)
        if generation == UInt32.max { exhausted = true } else { generation += 1 }
        return k
    }

    /// The key for the next message to send; the ratchet moves on.
    mutating func next(_ suite: CipherSuite) throws -> RatchetKey {
        guard !exhausted else { throw MLSError(.generationTooFar, "ratchet exhausted") }
        return try keyAndAdvance(suite)
    }

    /// The key for `target`; it is deleted from the ratchet as it is returned.
    mutating func take(_ suite: CipherSuite, generation target: UInt32, limits: SecretTreeLimits) throws -> RatchetKey {
        if exhausted || target < generation {
            guard let k = skipped.removeValue(forKey: target) else {
                throw MLSError(.secretConsumed, "generation \(target) already used or expired")
            }
            skippedOrder.removeAll { $0 == target }
            return k
        }
        guard target - generation <= limits.maxForwardDistance else {
            throw MLSError(.generationTooFar, "generation \(target) is \(target - generation) ahead")
        }
        while generation < target {
            let k = try keyAndAdvance(suite)
            if limits.maxSkippedKeys > 0 {
                skipped[k.generation] = k
                skippedOrder.append(k.generation)
                while skippedOrder.count > limits.maxSkippedKeys {
                    skipped.removeValue(forKey: skippedOrder.removeFirst())
                }
            }
        }
        return try keyAndAdvance(suite)
    }
}

/// The secret tree of one epoch (RFC 9420 §9): per-leaf handshake and
/// application ratchets derived lazily from `encryption_secret`. Every
/// intermediate secret is deleted once both children are derived, and every
/// message key once it has been handed out.
struct SecretTree: Sendable, Hashable, Codable {
    let suiteID: UInt16
    let leafCount: UInt32
    var limits: SecretTreeLimits
    /// Node secrets not yet expanded.
    var nodeSecrets: [UInt32: [UInt8]]
    var handshake: [UInt32: HashRatchet] = [:]
    var application: [UInt32: HashRatchet] = [:]

    var suite: CipherSuite { CipherSuite(rawValue: suiteID) }

    init(suite: CipherSuite, encryptionSecret: [UInt8], leafCount: UInt32, limits: SecretTreeLimits = .init()) {
        suiteID = suite.rawValue
        self.leafCount = leafCount
        self.limits = limits
        nodeSecrets = [TreeMath.root(leafCount): encryptionSecret]
    }

    private mutating func ensureLeaf(_ leaf: UInt32) throws {
        guard leaf < leafCount else { throw MLSError(.invalidMessage, "leaf \(leaf) outside tree of \(leafCount)") }
        if handshake[leaf] != nil, application[leaf] != nil { return }
        let derived = try deriveLeaf(leaf)
        for (node, secret) in derived.nodeSecretChanges { nodeSecrets[node] = secret }
        handshake[leaf] = derived.handshake
        application[leaf] = derived.application
    }

    /// The ratchets of a leaf that has none yet, derived from the lowest
    /// ancestor (or the leaf itself) that still holds a secret, and the node
    /// secrets that deriving them deletes (nil) or creates (the siblings of
    /// the path walked down). Nothing is stored here.
    private func deriveLeaf(_ leaf: UInt32) throws -> (handshake: HashRatchet, application: HashRatchet, nodeSecretChanges: [(UInt32, [UInt8]?)]) {
        guard handshake[leaf] == nil, application[leaf] == nil else { throw MLSError(.invalidState, "secret tree ratchets of leaf \(leaf)") }
        let node = leaf * 2
        let path = [node] + TreeMath.directPath(node, leafCount: leafCount)
        guard let start = path.firstIndex(where: { nodeSecrets[$0] != nil }), var secret = nodeSecrets[path[start]] else {
            throw MLSError(.secretConsumed, "secrets of leaf \(leaf) were deleted")
        }
        // Each node secret is deleted once both its children are derived.
        var changes: [(UInt32, [UInt8]?)] = [(path[start], nil)]
        var i = start
        while i > 0 {
            let parent = path[i], child = path[i - 1]
            guard let l = TreeMath.left(parent), let r = TreeMath.right(parent) else { throw MLSError(.invalidState, "secret tree") }
            let left = try suite.expandWithLabel(secret: secret, label: "tree", context: SecretTree.leftContext, length: suite.hashLength)
            let right = try suite.expandWithLabel(secret: secret, label: "tree", context: SecretTree.rightContext, length: suite.hashLength)
            changes.append(child == l ? (r, right) : (l, left))
            secret = child == l ? left : right
            i -= 1
        }
        return (HashRatchet(secret: try suite.expandWithLabel(secret: secret, label: "handshake", context: [], length: suite.hashLength), generation: 0),
                HashRatchet(secret: try suite.expandWithLabel(secret: secret, label: "application", context: [], length: suite.hashLength), generation: 0),
                changes)
    }

    private static let leftContext = Array("left".utf8), rightContext = Array("right".utf8)

    /// The next key to encrypt with, as `leaf`.
    mutating func nextKey(leaf: UInt32, type: RatchetType) throws -> RatchetKey {
        try ensureLeaf(leaf)
        switch type {
        case .handshake:
            guard var r = handshake[leaf] else { throw MLSError(.invalidState, "secret tree") }
            defer { handshake[leaf] = r }
            return try r.next(suite)
        case .application:
            guard var r = application[leaf] else { throw MLSError(.invalidState, "secret tree") }
            defer { application[leaf] = r }
            return try r.next(suite)
        }
    }

    /// What taking a received message's key changes in the tree; applied by
    /// ``consume(_:)`` once the message has been opened, so that a message
    /// that fails to open changes nothing.
    struct Consumption: Sendable {
        fileprivate let leaf: UInt32
        fileprivate let type: RatchetType
        /// The ratchet of `type` once the key is taken from it.
        fileprivate let ratchet: HashRatchet
        /// The leaf's other ratchet, when the leaf's ratchets are derived by this take.
        fileprivate let otherRatchet: HashRatchet?
        /// Node secrets deleted (nil) or created while deriving the leaf's ratchets.
        fileprivate let nodeSecretChanges: [(UInt32, [UInt8]?)]
    }

    /// The key for a received message and what consuming it changes; the
    /// tree itself is not modified.
    func keyForReceived(leaf: UInt32, type: RatchetType, generation: UInt32) throws -> (RatchetKey, Consumption) {
        guard leaf < leafCount else { throw MLSError(.invalidMessage, "leaf \(leaf) outside tree of \(leafCount)") }
        var h = handshake[leaf], a = application[leaf]
        var changes: [(UInt32, [UInt8]?)] = []
        let derived = h == nil || a == nil
        if derived {
            let d = try deriveLeaf(leaf)
            (h, a, changes) = (d.handshake, d.application, d.nodeSecretChanges)
        }
        guard var r = type == .handshake ? h : a else { throw MLSError(.invalidState, "secret tree") }
        let k = try r.take(suite, generation: generation, limits: limits)
        return (k, Consumption(leaf: leaf, type: type, ratchet: r, otherRatchet: derived ? (type == .handshake ? a : h) : nil,
                               nodeSecretChanges: changes))
    }

    /// Applies a ``keyForReceived(leaf:type:generation:)`` result: the key is deleted.
    mutating func consume(_ c: Consumption) {
        for (node, secret) in c.nodeSecretChanges { nodeSecrets[node] = secret }
        switch c.type {
        case .handshake:
            handshake[c.leaf] = c.ratchet
            if let other = c.otherRatchet { application[c.leaf] = other }
        case .application:
            application[c.leaf] = c.ratchet
            if let other = c.otherRatchet { handshake[c.leaf] = other }
        }
    }

    /// The key for a received message; it is deleted as it is returned.
    mutating func takeKey(leaf: UInt32, type: RatchetType, generation: UInt32) throws -> RatchetKey {
        let (key, consumption) = try keyForReceived(leaf: leaf, type: type, generation: generation)
        consume(consumption)
        return key
    }

    /// All secret material currently held (for tests of deletion).
    var heldSecrets: [[UInt8]] {
        var out = Array(nodeSecrets.values)
        for r in Array(handshake.values) + Array(application.values) {
            out.append(r.secret)
            for k in r.skipped.values { out.append(k.key); out.append(k.nonce) }
        }
        return out
    }
}

/// Sender-data key and nonce (RFC 9420 §6.3.2).
func senderDataKeyNonce(suite: CipherSuite, senderDataSecret: [UInt8], ciphertext: [UInt8]) throws -> (key: [UInt8], nonce: [UInt8]) {
    try suite.requireSupported()
    let sample = Array(ciphertext.prefix(suite.hashLength))
    let keyed = KeyedHMAC(key: senderDataSecret)
    return (suite.expandWithLabel(keyed: keyed, label: senderDataKeyLabel, context: sample, length: suite.aeadKeyLength),
            suite.expandWithLabel(keyed: keyed, label: senderDataNonceLabel, context: sample, length: suite.aeadNonceLength))
}

private let senderDataKeyLabel = Array("key".utf8), senderDataNonceLabel = Array("nonce".utf8)
