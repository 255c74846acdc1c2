import Foundation

extension MLSTestVectors {
    static func runTreeMath(_ r: VectorRecord) throws -> Outcome {
        let n = try r.int("n_leaves")
        guard n > 0, n <= 1 << 20 else { throw VectorFailure("n_leaves out of range") }
        let leaves = UInt32(n)
        try expectEqual(Int(TreeMath.nodeWidth(leaves)), try r.int("n_nodes"), "n_nodes")
        try expectEqual(Int(TreeMath.root(leaves)), try r.int("root"), "root")
        func optArray(_ key: String) throws -> [Int?] {
            try r.array(key).map { ($0 as? NSNumber)?.intValue }
        }
        let left = try optArray("left"), right = try optArray("right")
        let parent = try optArray("parent"), sibling = try optArray("sibling")
        let width = Int(TreeMath.nodeWidth(leaves))
        try expectEqual(left.count, width, "left count")
        for i in 0 ..< width {
            let x = UInt32(i)
            try expectEqual(TreeMath.left(x).map(Int.init), left[i], "left(\(i))")
            try expectEqual(TreeMath.right(x).map(Int.init), right[i], "right(\(i))")
            try expectEqual(TreeMath.parent(x, leafCount: leaves).map(Int.init), parent[i], "parent(\(i))")
            try expectEqual(TreeMath.sibling(x, leafCount: leaves).map(Int.init), sibling[i], "sibling(\(i))")
        }
        return .passed
    }

    static func runDeserialization(_ r: VectorRecord) throws -> Outcome {
        let header = try r.bytes("vlbytes_header")
        var reader = TLSReader(header)
        let len = try reader.readVarint()
        try reader.finish()
        try expectEqual(Int(len), try r.int("length"), "length")
        var w = TLSWriter()
        w.writeVarint(Int(len))
        try expectEqual(w.bytes, header, "re-encoded header")
        return .passed
    }

    static func runCryptoBasics(_ r: VectorRecord) throws -> Outcome {
        let cs = try r.suite
        let rh = try r.record("ref_hash")
        try expectEqual(try cs.refHash(label: Array(try rh.string("label").utf8), value: try rh.bytes("value")), try rh.bytes("out"), "ref_hash")

        let ewl = try r.record("expand_with_label")
        try expectEqual(try cs.expandWithLabel(secret: try ewl.bytes("secret"), label: try ewl.string("label"),
                                               context: try ewl.bytes("context"), length: try ewl.int("length")),
                        try ewl.bytes("out"), "expand_with_label")

        let ds = try r.record("derive_secret")
        try expectEqual(try cs.deriveSecret(secret: try ds.bytes("secret"), label: try ds.string("label")), try ds.bytes("out"), "derive_secret")

        let dts = try r.record("derive_tree_secret")
        guard let gen = UInt32(exactly: try dts.uint64("generation")) else { throw VectorFailure("generation range") }
        try expectEqual(try cs.deriveTreeSecret(secret: try dts.bytes("secret"), label: try dts.string("label"),
                                                generation: gen, length: try dts.int("length")),
                        try dts.bytes("out"), "derive_tree_secret")

        let swl = try r.record("sign_with_label")
        let label = try swl.string("label"), content = try swl.bytes("content")
        let pub = try swl.bytes("pub"), priv = try swl.bytes("priv")
        try expectEqual(try cs.signaturePublicKey(privateKey: priv), pub, "signature public key from private")
        try expectTrue(try cs.verifyWithLabel(publicKey: pub, label: label, content: content, signature: try swl.bytes("signature")),
                       "vector signature does not verify")
        let mine = try cs.signWithLabel(privateKey: priv, label: label, content: content)
        try expectTrue(try cs.verifyWithLabel(publicKey: pub, label: label, content: content, signature: mine), "own signature does not verify")
        try expectTrue(!(try cs.verifyWithLabel(publicKey: pub, label: label + "x", content: content, signature: mine)), "signature verified under wrong label")

        let e = try r.record("encrypt_with_label")
        let elabel = try e.string("label"), ctx = try e.bytes("context")
        let pt = try cs.decryptWithLabel(privateKey: try e.bytes("priv"), label: elabel, context: ctx,
                                         kemOutput: try e.bytes("kem_output"), ciphertext: try e.bytes("ciphertext"))
        try expectEqual(pt, try e.bytes("plaintext"), "decrypt_with_label")
        try expectEqual(try cs.hpkePublicKey(privateKey: try e.bytes("priv")), try e.bytes("pub"), "HPKE public key from private")
        let sealed = try cs.encryptWithLabel(publicKey: try e.bytes("pub"), label: elabel, context: ctx, plaintext: pt)
        let back = try cs.decryptWithLabel(privateKey: try e.bytes("priv"), label: elabel, context: ctx, kemOutput: sealed.kemOutput, ciphertext: sealed.ciphertext)
        try expectEqual(back, pt, "encrypt/decrypt round trip")
        return .passed
    }
}
