extension MLSTestVectors {
    /// Decodes `bytes` with `decode`, requiring all input consumed, re-encodes
    /// with `encode` and requires identical bytes.
    static func roundTrip<T>(_ what: String, _ bytes: [UInt8], _ decode: (inout TLSReader) throws -> T, _ encode: (inout TLSWriter, T) -> Void) throws {
        var r = TLSReader(bytes)
        let value: T
        do {
            value = try decode(&r)
            try r.finish()
        } catch {
            throw VectorFailure("\(what): decode failed: \(error)")
        }
        var w = TLSWriter()
        encode(&w, value)
        try expectEqual(w.bytes, bytes, "\(what) re-encoding")
    }

    static func roundTrip<T: TLSCodable>(_ what: String, _ bytes: [UInt8], _: T.Type) throws {
        try roundTrip(what, bytes, { try T(from: &$0) }, { $1.encode(to: &$0) })
    }

    static func runMessages(_ r: VectorRecord) throws -> Outcome {
        let checks: [(String, (String, [UInt8]) throws -> Void)] = [
            ("mls_welcome", { try roundTrip($0, $1, MLSMessage.self) }),
            ("mls_group_info", { try roundTrip($0, $1, MLSMessage.self) }),
            ("mls_key_package", { try roundTrip($0, $1, MLSMessage.self) }),
            ("ratchet_tree", { try roundTrip($0, $1, RatchetTreeNodes.self) }),
            ("group_secrets", { try roundTrip($0, $1, GroupSecrets.self) }),
            ("add_proposal", { try roundTrip($0, $1, KeyPackage.self) }),
            ("update_proposal", { try roundTrip($0, $1, LeafNode.self) }),
            ("remove_proposal", { try roundTrip($0, $1, { try $0.readUInt32() }, { $0.writeUInt32($1) }) }),
            ("pre_shared_key_proposal", { try roundTrip($0, $1, PreSharedKeyID.self) }),
            ("re_init_proposal", {
                try roundTrip($0, $1, { r in (try r.readOpaque(), try r.readUInt16(), try CipherSuite(from: &r), try r.readExtensions()) },
                              { w, v in w.writeOpaque(v.0); w.writeUInt16(v.1); v.2.encode(to: &w); w.writeExtensions(v.3) })
            }),
            ("external_init_proposal", { try roundTrip($0, $1, { try $0.readOpaque() }, { $0.writeOpaque($1) }) }),
            ("group_context_extensions_proposal", { try roundTrip($0, $1, { try $0.readExtensions() }, { $0.writeExtensions($1) }) }),
            ("commit", { try roundTrip($0, $1, Commit.self) }),
            ("public_message_application", { try roundTrip($0, $1, MLSMessage.self) }),
            ("public_message_proposal", { try roundTrip($0, $1, MLSMessage.self) }),
            ("public_message_commit", { try roundTrip($0, $1, MLSMessage.self) }),
            ("private_message", { try roundTrip($0, $1, MLSMessage.self) }),
        ]
        for (field, check) in checks {
            try check(field, try r.bytes(field))
        }
        return .passed
    }
}
