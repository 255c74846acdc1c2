import Foundation

extension MLSTestVectors {
    static func runTreeValidation(_ r: VectorRecord) throws -> Outcome {
        let cs = try r.suite
        let tree = try RatchetTree(suite: cs, bytes: try r.bytes("tree"))
        let hashes = try r.array("tree_hashes").map { try hexDecode(($0 as? String) ?? "", field: "tree_hashes") }
        let resolutions = try r.array("resolutions").map { ($0 as? [NSNumber] ?? []).map { $0.uint32Value } }
        try expectEqual(hashes.count, tree.nodes.count, "node count")
        let all = tree.allTreeHashes()
        for i in 0 ..< tree.nodes.count {
            try expectEqual(all[i], hashes[i], "tree hash of node \(i)")
            try expectEqual(tree.treeHash(UInt32(i), useCache: false), hashes[i], "recursive tree hash of node \(i)")
            try expectEqual(tree.resolution(UInt32(i)), resolutions[i], "resolution of node \(i)")
        }
        try tree.validate(groupID: try r.bytes("group_id"))
        return .passed
    }

    static func runTreeOperations(_ r: VectorRecord) throws -> Outcome {
        let cs = try r.suite
        var tree = try RatchetTree(suite: cs, bytes: try r.bytes("tree_before"))
        try expectEqual(tree.treeHash, try r.bytes("tree_hash_before"), "tree_hash_before")
        let proposal = try Proposal(tlsBytes: try r.bytes("proposal"))
        guard let sender = UInt32(exactly: try r.int("proposal_sender")) else { throw VectorFailure("proposal_sender") }
        switch proposal {
        case let .add(kp): tree.addLeaf(kp.leafNode)
        case let .update(leaf): tree.updateLeaf(sender, leaf)
        case let .remove(i): tree.removeLeaf(i)
        default: throw VectorFailure("unexpected proposal type \(proposal.type)")
        }
        try expectEqual(tree.wire.tlsBytes, try r.bytes("tree_after"), "tree_after")
        try expectEqual(tree.treeHash, try r.bytes("tree_hash_after"), "tree_hash_after")
        return .passed
    }
}
