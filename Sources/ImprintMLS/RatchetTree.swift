/// The public ratchet tree of a group (RFC 9420 §7), in array form.
///
/// The array always covers a full binary tree (a power-of-two number of
/// leaves); the wire form drops trailing blank nodes.
public struct RatchetTree: Sendable, Hashable {
    public let suite: CipherSuite
    /// Nodes by node index; nil is a blank node.
    public private(set) var nodes: [Node?]
    /// Tree hash of each node, nil where a change at or below the node made it
    /// stale. Invariant: a stale node's ancestors are stale too, so a clean
    /// root means a clean tree. Derived data: not part of equality.
    private var hashCache: [[UInt8]?]

    public static func == (a: RatchetTree, b: RatchetTree) -> Bool { a.suite == b.suite && a.nodes == b.nodes }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(suite)
        hasher.combine(nodes)
    }

    /// Number of leaves (a power of two).
    public var leafCount: UInt32 { UInt32((nodes.count + 1) / 2) }

    /// Upper bound on decoded tree width (leaves), to bound work on hostile input.
    static let maxLeaves: UInt32 = 1 << 20

    /// A one-member tree.
    init(suite: CipherSuite, firstLeaf: LeafNode) {
        self.suite = suite
        nodes = [.leaf(firstLeaf)]
        hashCache = [nil]
        refreshTreeHashes()
    }

    /// Builds a tree from its wire form, checking node kinds and width.
    public init(suite: CipherSuite, wire: RatchetTreeNodes) throws {
        self.suite = suite
        var n = wire.nodes
        guard !n.isEmpty else { throw MLSError(.invalidTree, "empty tree") }
        guard n.count % 2 == 1 else { throw MLSError(.invalidTree, "even number of nodes") }
        guard n.last! != nil else { throw MLSError(.invalidTree, "trailing blank node") }
        guard n.count <= Int(2 * RatchetTree.maxLeaves - 1) else { throw MLSError(.invalidTree, "tree too large") }
        for (i, node) in n.enumerated() {
            switch node {
            case .leaf?: guard i % 2 == 0 else { throw MLSError(.invalidTree, "leaf at parent position \(i)") }
            case .parent?: guard i % 2 == 1 else { throw MLSError(.invalidTree, "parent at leaf position \(i)") }
            case nil: break
            }
        }
        var leaves = 1
        while 2 * leaves - 1 < n.count { leaves *= 2 }
        n.append(contentsOf: [Node?](repeating: nil, count: 2 * leaves - 1 - n.count))
        nodes = n
        hashCache = [[UInt8]?](repeating: nil, count: n.count)
        refreshTreeHashes()
    }

    /// Decodes `optional<Node> ratchet_tree<V>` bytes.
    public init(suite: CipherSuite, bytes: [UInt8]) throws {
        try self.init(suite: suite, wire: RatchetTreeNodes(tlsBytes: bytes))
    }

    /// The wire form with trailing blank nodes removed.
    public var wire: RatchetTreeNodes {
        var n = nodes
        while let last = n.last, last == nil { n.removeLast() }
        return RatchetTreeNodes(nodes: n)
    }

    // MARK: Access

    /// The leaf at `index`, nil if blank or out of range.
    public func leaf(_ index: UInt32) -> LeafNode? {
        let i = Int(index) * 2
        guard i < nodes.count, case let .leaf(l)? = nodes[i] else { return nil }
        return l
    }

    func parentNode(_ node: UInt32) -> ParentNode? {
        guard Int(node) < nodes.count, case let .parent(p)? = nodes[Int(node)] else { return nil }
        return p
    }

    func isBlank(_ node: UInt32) -> Bool { Int(node) >= nodes.count || nodes[Int(node)] == nil }

    /// Indices of non-blank leaves.
    public var occupiedLeaves: [UInt32] {
        (0 ..< leafCount).filter { nodes[Int($0 * 2)] != nil }
    }

    var root: UInt32 { TreeMath.root(leafCount) }

    // MARK: Resolution

    /// Resolution of a node (RFC 9420 §4.1.1).
    public func resolution(_ node: UInt32) -> [UInt32] { resolution(node, excluding: []) }

    /// Resolution with the given leaves treated as blank.
    func resolution(_ node: UInt32, excluding: Set<UInt32>) -> [UInt32] {
        guard Int(node) < nodes.count else { return [] }
        switch nodes[Int(node)] {
        case .leaf?: return excluding.contains(node / 2) ? [] : [node]
        case let .parent(p)?: return [node] + p.unmergedLeaves.filter { !excluding.contains($0) }.map { $0 * 2 }
        case nil:
            guard let l = TreeMath.left(node), let r = TreeMath.right(node) else { return [] }
            return resolution(l, excluding: excluding) + resolution(r, excluding: excluding)
        }
    }

    // MARK: Tree hash

    /// Tree hash of the subtree at `node` (RFC 9420 §7.8); `excluding` leaves
    /// are hashed as blank and dropped from unmerged-leaf lists. Clean cached
    /// subtree hashes are reused unless `useCache` is false.
    func treeHash(_ node: UInt32, excluding: Set<UInt32> = [], useCache: Bool = true) -> [UInt8] {
        let k = TreeMath.level(node)
        let lo = (node - ((UInt32(1) << k) - 1)) / 2, hi = lo + (UInt32(1) << k)
        let inside = excluding.filter { $0 >= lo && $0 < hi }.sorted()
        return treeHash(node, excluded: inside[...], excludedSet: Set(inside), useCache: useCache)
    }

    /// `excluded`: the sorted excluded leaves that lie in `node`'s subtree.
    private func treeHash(_ node: UInt32, excluded: ArraySlice<UInt32>, excludedSet: Set<UInt32>, useCache: Bool) -> [UInt8] {
        if useCache, excluded.isEmpty, let h = hashCache[Int(node)] { return h }
        guard let l = TreeMath.left(node), let r = TreeMath.right(node) else {
            return leafTreeHash(node, blank: !excluded.isEmpty)
        }
        // Leaves of the left subtree are those below (node + 1) / 2.
        let split = excluded.firstIndex { $0 >= (node + 1) / 2 } ?? excluded.endIndex
        let left = treeHash(l, excluded: excluded[..<split], excludedSet: excludedSet, useCache: useCache)
        let right = treeHash(r, excluded: excluded[split...], excludedSet: excludedSet, useCache: useCache)
        return parentTreeHash(node, left: left, right: right, dropUnmerged: excluded.isEmpty ? nil : excludedSet)
    }

    private func leafTreeHash(_ node: UInt32, blank: Bool) -> [UInt8] {
        var w = TLSWriter()
        w.writeUInt8(1)
        w.writeUInt32(node / 2)
        w.writeOptional(blank ? nil : leaf(node / 2)) { $1.encode(to: &$0) }
        return suite.hash(w.bytes)
    }

    private func parentTreeHash(_ node: UInt32, left: [UInt8], right: [UInt8], dropUnmerged: Set<UInt32>?) -> [UInt8] {
        var w = TLSWriter()
        w.writeUInt8(2)
        var p = parentNode(node)
        if let dropUnmerged { p?.unmergedLeaves.removeAll { dropUnmerged.contains($0) } }
        w.writeOptional(p) { $1.encode(to: &$0) }
        w.writeOpaque(left)
        w.writeOpaque(right)
        return suite.hash(w.bytes)
    }

    /// Tree hashes of every node, computed bottom-up from scratch.
    func allTreeHashes() -> [[UInt8]] {
        var t = self
        t.hashCache = [[UInt8]?](repeating: nil, count: nodes.count)
        t.refreshTreeHashes()
        return t.hashCache.map { $0 ?? [] }
    }

    /// Recomputes the stale cached tree hashes, bottom-up.
    mutating func refreshTreeHashes() {
        guard hashCache[Int(root)] == nil else { return }
        for level in 0 ... TreeMath.level(root) {
            var i = (UInt32(1) << level) - 1
            while Int(i) < nodes.count {
                if hashCache[Int(i)] == nil {
                    if level == 0 {
                        hashCache[Int(i)] = leafTreeHash(i, blank: false)
                    } else if let l = hashCache[Int(TreeMath.left(i)!)], let r = hashCache[Int(TreeMath.right(i)!)] {
                        hashCache[Int(i)] = parentTreeHash(i, left: l, right: r, dropUnmerged: nil)
                    }
                }
                i += UInt32(1) << (level + 1)
            }
        }
    }

    /// Marks `node` and its ancestors stale.
    private mutating func invalidateHash(_ node: UInt32) {
        var n: UInt32? = node
        while let x = n, hashCache[Int(x)] != nil {
            hashCache[Int(x)] = nil
            n = TreeMath.parent(x, leafCount: leafCount)
        }
    }

    /// Tree hash of the whole tree.
    public var treeHash: [UInt8] { treeHash(root) }

    // MARK: Parent hash

    /// ParentHash(P) for a child of `parent` whose sibling is `sibling` (RFC 9420 §7.9).
    func parentHash(of parent: UInt32, sibling: UInt32) -> [UInt8]? {
        guard let p = parentNode(parent) else { return nil }
        var w = TLSWriter()
        w.writeOpaque(p.encryptionKey)
        w.writeOpaque(p.parentHash)
        w.writeOpaque(treeHash(sibling, excluding: Set(p.unmergedLeaves)))
        return suite.hash(w.bytes)
    }

    func nodeParentHash(_ node: UInt32) -> [UInt8]? {
        switch nodes[Int(node)] {
        case let .leaf(l)?: l.parentHash
        case let .parent(p)?: p.parentHash
        case nil: nil
        }
    }

    /// Non-blank nodes below or at `node` reached only through blank nodes.
    func nonBlankFrontier(_ node: UInt32) -> [UInt32] {
        if !isBlank(node) { return [node] }
        guard let l = TreeMath.left(node), let r = TreeMath.right(node) else { return [] }
        return nonBlankFrontier(l) + nonBlankFrontier(r)
    }

    /// Whether every non-blank parent node is parent-hash valid (RFC 9420 §7.9.2):
    /// some descendant D, with only blank nodes between D and P, carries
    /// ParentHash(P) computed with the other child of P as co-path child.
    public func verifyParentHashes() -> Bool {
        for i in stride(from: 1, to: nodes.count, by: 2) {
            let p = UInt32(i)
            guard parentNode(p) != nil, let l = TreeMath.left(p), let r = TreeMath.right(p) else { continue }
            var ok = false
            for (child, sibling) in [(l, r), (r, l)] {
                guard let expected = parentHash(of: p, sibling: sibling) else { continue }
                if nonBlankFrontier(child).contains(where: { nodeParentHash($0) == expected }) {
                    ok = true
                    break
                }
            }
            if !ok { return false }
        }
        return true
    }

    // MARK: Validation

    /// Signature keys unique among leaves; encryption keys unique among all nodes.
    func checkKeyUniqueness() throws {
        var encryptionKeys = Set<[UInt8]>(), signatureKeys = Set<[UInt8]>()
        for case let node? in nodes {
            guard encryptionKeys.insert(node.encryptionKey).inserted else { throw MLSError(.invalidTree, "duplicate encryption key") }
            if case let .leaf(l) = node, !signatureKeys.insert(l.signatureKey).inserted { throw MLSError(.invalidTree, "duplicate signature key") }
        }
    }

    /// Checks the tree received from a Welcome or in a vector: structure,
    /// parent hashes, leaf signatures, unique keys, unmerged-leaf consistency.
    public func validate(groupID: [UInt8]) throws {
        guard verifyParentHashes() else { throw MLSError(.invalidParentHash, "tree parent hashes") }
        var encryptionKeys = Set<[UInt8]>(), signatureKeys = Set<[UInt8]>()
        // The leaf signatures are the bulk of the work: verified in parallel first.
        let occupied = occupiedLeaves
        let signatureValid = try Parallel.map(occupied.count) { i in
            try leaf(occupied[i])?.verifySignature(suite: suite, groupID: groupID, leafIndex: occupied[i]) ?? false
        }
        for (li, valid) in zip(occupied, signatureValid) {
            guard let l = leaf(li) else { continue }
            guard valid else {
                throw MLSError(.signatureInvalid, "leaf \(li) signature")
            }
            guard encryptionKeys.insert(l.encryptionKey).inserted else { throw MLSError(.invalidTree, "duplicate encryption key") }
            guard signatureKeys.insert(l.signatureKey).inserted else { throw MLSError(.invalidTree, "duplicate signature key") }
        }
        for i in stride(from: 1, to: nodes.count, by: 2) {
            guard let p = parentNode(UInt32(i)) else { continue }
            guard encryptionKeys.insert(p.encryptionKey).inserted else { throw MLSError(.invalidTree, "duplicate encryption key") }
            guard zip(p.unmergedLeaves, p.unmergedLeaves.dropFirst()).allSatisfy({ $0 < $1 }) else {
                throw MLSError(.invalidTree, "unmerged leaves of node \(i) not in increasing order")
            }
            for u in p.unmergedLeaves {
                // Unmerged leaves must be non-blank leaves below P, and listed on every
                // non-blank node between the leaf and P.
                guard u < leafCount, leaf(u) != nil, TreeMath.isInSubtree(u * 2, root: UInt32(i)) else {
                    throw MLSError(.invalidTree, "bad unmerged leaf \(u) at node \(i)")
                }
                for a in TreeMath.directPath(u * 2, leafCount: leafCount).prefix(while: { $0 != UInt32(i) }) {
                    if let ap = parentNode(a), !ap.unmergedLeaves.contains(u) {
                        throw MLSError(.invalidTree, "unmerged leaf \(u) missing below node \(i)")
                    }
                }
            }
        }
    }

    // MARK: Modification

    /// Adds a leaf in the leftmost blank slot (extending the tree if needed); returns its index.
    @discardableResult
    mutating func addLeaf(_ leafNode: LeafNode) -> UInt32 {
        var from: UInt32 = 0
        return addLeaf(leafNode, searchingFrom: &from)
    }

    /// Adds a leaf in the leftmost blank slot at or after `from`, which the
    /// caller guarantees has no blank slot before it; `from` moves past the new
    /// leaf, so a batch of adds scans the tree once.
    mutating func addLeaf(_ leafNode: LeafNode, searchingFrom from: inout UInt32) -> UInt32 {
        var li = from
        while li < leafCount, nodes[Int(li * 2)] != nil { li += 1 }
        if li == leafCount {
            nodes.append(contentsOf: [Node?](repeating: nil, count: nodes.count + 1))
            hashCache.append(contentsOf: [[UInt8]?](repeating: nil, count: hashCache.count + 1))
        }
        from = li + 1
        setNode(li * 2, .leaf(leafNode))
        for p in TreeMath.directPath(li * 2, leafCount: leafCount) {
            guard case var .parent(pn)? = nodes[Int(p)] else { continue }
            nodes[Int(p)] = nil // so that `pn` holds the only reference to its list
            // Kept sorted in increasing order (RFC 9420 §7.1).
            if let last = pn.unmergedLeaves.last, last > li {
                pn.unmergedLeaves.insert(li, at: pn.unmergedLeaves.firstIndex { $0 > li } ?? pn.unmergedLeaves.count)
            } else {
                pn.unmergedLeaves.append(li)
            }
            setNode(p, .parent(pn))
        }
        return li
    }

    /// Replaces a member's leaf and blanks its direct path (Update).
    mutating func updateLeaf(_ index: UInt32, _ leafNode: LeafNode) {
        setNode(index * 2, .leaf(leafNode))
        blankDirectPath(index)
    }

    mutating func blankDirectPath(_ index: UInt32) {
        for p in TreeMath.directPath(index * 2, leafCount: leafCount) { setNode(p, nil) }
    }

    /// Blanks a leaf and its direct path, then truncates (Remove).
    mutating func removeLeaf(_ index: UInt32) {
        setNode(index * 2, nil)
        blankDirectPath(index)
        truncate()
    }

    /// Halves the tree while its right half holds no member.
    mutating func truncate() {
        while leafCount > 1, (leafCount / 2 ..< leafCount).allSatisfy({ nodes[Int($0 * 2)] == nil }) {
            nodes.removeLast(nodes.count / 2 + 1)
            hashCache.removeLast(hashCache.count / 2 + 1)
        }
    }

    mutating func setNode(_ index: UInt32, _ node: Node?) {
        nodes[Int(index)] = node
        invalidateHash(index)
    }
}
