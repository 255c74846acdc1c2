import Testing
@testable import ImprintMLS

@Suite struct RatchetTreeTests {
    let suite = CipherSuite.x25519Aes128GcmSha256Ed25519

    func leaf(_ n: UInt8) -> LeafNode {
        LeafNode(encryptionKey: [n], signatureKey: [n, n], credential: .basic(identity: [n]), capabilities: Capabilities(cipherSuites: [1]),
                 source: .keyPackage(Lifetime(notBefore: 0, notAfter: .max)), extensions: [], signature: [])
    }

    @Test func addExtendsAndRemoveTruncates() throws {
        var tree = RatchetTree(suite: suite, firstLeaf: leaf(0))
        #expect(tree.addLeaf(leaf(1)) == 1)
        #expect(tree.addLeaf(leaf(2)) == 2)
        #expect(tree.leafCount == 4)
        tree.setNode(1, .parent(ParentNode(encryptionKey: [9], parentHash: [], unmergedLeaves: [])))
        tree.setNode(3, .parent(ParentNode(encryptionKey: [8], parentHash: [], unmergedLeaves: [])))
        #expect(tree.addLeaf(leaf(3)) == 3)
        #expect(tree.parentNode(3)?.unmergedLeaves == [3])
        #expect(tree.resolution(5) == [4, 6])
        #expect(tree.resolution(3) == [3, 6])
        // Leaf 0 leaves and is replaced: the root's unmerged list stays sorted.
        tree.setNode(0, nil)
        tree.addLeaf(leaf(9))
        #expect(tree.parentNode(3)?.unmergedLeaves == [0, 3])
        tree.removeLeaf(1)
        #expect(tree.leaf(1) == nil && tree.parentNode(1) == nil && tree.parentNode(3) == nil)
        #expect(tree.addLeaf(leaf(4)) == 1) // leftmost blank slot is reused
        tree.removeLeaf(3)
        tree.removeLeaf(2)
        #expect(tree.leafCount == 2) // right half was empty: truncated
        let decoded = try RatchetTree(suite: suite, bytes: tree.wire.tlsBytes)
        #expect(decoded == tree)
        #expect(decoded.treeHash == tree.treeHash)
    }

    @Test func rejectsMalformedShapes() throws {
        let p = Node.parent(ParentNode(encryptionKey: [1], parentHash: [], unmergedLeaves: []))
        let l = Node.leaf(leaf(1))
        for bad in [[], [l, nil], [p], [l, l, l], [l, nil, nil]] as [[Node?]] {
            #expect(throws: MLSError.self) { try RatchetTree(suite: suite, wire: RatchetTreeNodes(nodes: bad)) }
        }
        // A 3-leaf wire tree is padded to 4 leaves.
        let t = try RatchetTree(suite: suite, wire: RatchetTreeNodes(nodes: [l, nil, .leaf(leaf(2)), nil, .leaf(leaf(3))]))
        #expect(t.leafCount == 4 && t.nodes.count == 7)
        #expect(t.wire.nodes.count == 5)
    }
}
