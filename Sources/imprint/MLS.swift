import ImprintEncoding
import ArgumentParser
import Foundation
import ImprintMLS

/// `imprint mls`: a scriptable RFC 9420 peer whose state lives in a directory,
/// so separate invocations (and other MLS implementations) can form a group
/// by exchanging `MLSMessage` files. See the "MLS peer" section of the CLI contract.
struct MLS: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mls",
        abstract: "An MLS (RFC 9420) peer whose state persists in a directory.",
        subcommands: [
            MLSInit.self, MLSKeyPackage.self, MLSCreateGroup.self, MLSAdd.self, MLSJoin.self, MLSEncrypt.self,
            MLSProcess.self, MLSRemove.self, MLSUpdate.self, MLSExportSecret.self, MLSEpoch.self, MLSMembers.self,
        ]
    )
}

/// Options every `imprint mls` command takes.
struct MLSCommonOptions: ParsableArguments {
    @Option(name: .long, help: "The peer's state directory.")
    var dir: String

    @Flag(name: .long, help: "Print exactly one JSON object on stdout instead of text.")
    var json = false

    /// Prints the command's result: `text` (one line, newline added) or, with `--json`, `object`.
    func emit(_ text: String, _ object: [String: Any]) throws {
        if json {
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            FileHandle.standardOutput.write(data + Data("\n".utf8))
        } else {
            print(text)
        }
    }

    var state: MLSStateDirectory { MLSStateDirectory(path: dir) }
}

/// Options of commands that send a handshake message.
struct MLSHandshakeOptions: ParsableArguments {
    @Flag(name: .long, help: "Send the commit as a PrivateMessage (default: PublicMessage).")
    var privateHandshake = false
}

/// Resolves `--suite` against the identity: the suite must use the identity's signature scheme.
private func resolveSuite(_ requested: UInt16?, identity: MLSIdentity, signatureKey: [UInt8]) throws -> CipherSuite {
    let suite = requested.map(CipherSuite.init(rawValue:)) ?? identity.cipherSuite
    guard suite.isSupported else { throw MLSCLIError.usage("unsupported cipher suite \(suite.rawValue) (supported: 1, 2, 3)") }
    guard let pub = try? suite.signaturePublicKey(privateKey: signatureKey),
          let own = try? identity.cipherSuite.signaturePublicKey(privateKey: signatureKey), pub == own
    else {
        throw MLSCLIError.usage("cipher suite \(suite.rawValue) does not use the identity's signature scheme (suite \(identity.suite))")
    }
    return suite
}

/// Writes the messages of a commit, then the new group state (in that order:
/// if writing the state fails, the group stays at the old epoch and the
/// written messages are merely unused).
private func finishCommit(_ output: CommitOutput, group: MLSGroup, common: MLSCommonOptions,
                          commitOut: String, welcomeOut: String?, treeOut: String? = nil) throws {
    let state = common.state
    var result: [String: Any] = ["epoch": group.epoch, "commit": commitOut, "commit_bytes": output.commit.tlsBytes.count,
                                 "private": output.commit.wireFormat == .privateMessage]
    if let welcome = output.welcome {
        guard let welcomeOut else {
            throw MLSCLIError.usage("the commit adds members (pending Add proposals): give --welcome-out")
        }
        let bytes = MLSMessage.welcome(welcome).tlsBytes
        try writeFileAtomically(welcomeOut, bytes)
        result["welcome"] = welcomeOut
        result["welcome_bytes"] = bytes.count
    }
    if let treeOut {
        try writeFileAtomically(treeOut, group.tree.wire.tlsBytes)
        result["tree"] = treeOut
    }
    try writeFileAtomically(commitOut, output.commit.tlsBytes)
    try state.saveGroup(group)
    try common.emit("\(group.epoch)", result)
}

/// `imprint mls init`: a signature key pair and a basic credential.
struct MLSInit: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "init", abstract: "Create a signature key pair and a basic credential <name>.")
    @Option(name: .long, help: "The credential's identity (UTF-8).") var name: String
    @OptionGroup var common: MLSCommonOptions
    @Option(name: .long, help: "Cipher suite (1, 2 or 3).") var suite: UInt16 = 1

    func run() throws {
        try runMLSCommand {
            guard !name.isEmpty else { throw MLSCLIError.usage("--name must not be empty") }
            let cs = CipherSuite(rawValue: suite)
            guard cs.isSupported else { throw MLSCLIError.usage("unsupported cipher suite \(suite) (supported: 1, 2, 3)") }
            let state = common.state
            guard try !state.hasIdentity else {
                throw MLSCLIError.usage("\(state.path) already has an identity")
            }
            try state.create()
            try state.lock()
            guard try !state.hasIdentity else {
                throw MLSCLIError.usage("\(state.path) already has an identity")
            }
            let keys = try cs.generateSignatureKeyPair()
            try state.saveIdentity(MLSIdentity(name: name, suite: suite, signaturePublicKey: keys.publicKey, signaturePrivateKey: keys.privateKey))
            try common.emit(Hex.encode(keys.publicKey), ["name": name, "suite": Int(suite), "signature_key": Hex.encode(keys.publicKey)])
        }
    }
}

/// `imprint mls keypackage`: a fresh KeyPackage; its private keys stay in the directory.
struct MLSKeyPackage: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "keypackage", abstract: "Write a fresh KeyPackage (private keys kept in --dir).")
    @OptionGroup var common: MLSCommonOptions
    @Option(name: .long, help: "Output file (an MLSMessage).") var out: String
    @Option(name: .long, help: "Cipher suite (default: the identity's).") var suite: UInt16?

    func run() throws {
        try runMLSCommand {
            let state = common.state
            try state.lock()
            let (identity, key) = try state.loadIdentity()
            let cs = try resolveSuite(suite, identity: identity, signatureKey: key)
            let (kp, keys) = try KeyPackage.create(suite: cs, credential: identity.credential, signaturePrivateKey: key)
            try state.saveKeyPackage(kp, keys)
            try writeFileAtomically(out, MLSMessage.keyPackage(kp).tlsBytes)
            let ref = Hex.encode(try kp.reference())
            try common.emit(ref, ["key_package_ref": ref, "out": out, "suite": Int(cs.rawValue)])
        }
    }
}

/// `imprint mls create-group`: a one-member group at epoch 0.
struct MLSCreateGroup: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "create-group", abstract: "Create a group; prints its id (hex).")
    @OptionGroup var common: MLSCommonOptions
    @Option(name: .customLong("group-id"), help: "Group id, hex (default: 16 random bytes).") var groupID: String?
    @Option(name: .long, help: "Cipher suite (default: the identity's).") var suite: UInt16?

    func run() throws {
        try runMLSCommand {
            let state = common.state
            try state.lock()
            let (identity, key) = try state.loadIdentity()
            guard try !state.hasGroup else { throw MLSCLIError.usage("\(state.path) is already in a group") }
            let cs = try resolveSuite(suite, identity: identity, signatureKey: key)
            let id: [UInt8]
            if let groupID {
                guard let bytes = Hex.decode(groupID), !bytes.isEmpty else { throw MLSCLIError.usage("--group-id must be non-empty hex") }
                id = bytes
            } else {
                id = randomBytes(16)
            }
            let group = try MLSGroup.create(suite: cs, groupID: id, credential: identity.credential, signaturePrivateKey: key)
            try state.saveGroup(group)
            try common.emit(Hex.encode(group.groupID), ["group_id": Hex.encode(group.groupID), "epoch": group.epoch, "suite": Int(cs.rawValue)])
        }
    }
}

/// `imprint mls add`: one commit adding every given KeyPackage, applied locally.
struct MLSAdd: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Commit adding members; writes the commit and the Welcome.")
    @OptionGroup var common: MLSCommonOptions
    @Option(name: .long, help: "A KeyPackage (MLSMessage) file; repeat to add several.") var kp: [String] = []
    @Option(name: .customLong("commit-out"), help: "Commit output file.") var commitOut: String
    @Option(name: .customLong("welcome-out"), help: "Welcome output file.") var welcomeOut: String
    @Option(name: .customLong("tree-out"), help: "Write the ratchet tree here instead of into the Welcome.") var treeOut: String?
    @OptionGroup var handshake: MLSHandshakeOptions

    func run() throws {
        try runMLSCommand {
            guard !kp.isEmpty else { throw MLSCLIError.usage("give at least one --kp") }
            let state = common.state
            try state.lock()
            var group = try state.loadGroup()
            var proposals: [Proposal] = []
            for file in kp {
                guard case let .keyPackage(keyPackage) = try readMLSMessage(file) else {
                    throw MLSCLIError.corrupt("\(file) is not a KeyPackage")
                }
                proposals.append(.add(keyPackage))
            }
            let options = CommitOptions(ratchetTreeInWelcome: treeOut == nil, encrypt: handshake.privateHandshake)
            let output = try group.commit(proposals, options: options)
            try finishCommit(output, group: group, common: common, commitOut: commitOut, welcomeOut: welcomeOut, treeOut: treeOut)
        }
    }
}

/// `imprint mls join`: joins a group from a Welcome addressed to one of our KeyPackages.
struct MLSJoin: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "join", abstract: "Join a group from a Welcome; prints the group id and epoch.")
    @OptionGroup var common: MLSCommonOptions
    @Option(name: .long, help: "Welcome (MLSMessage) file.") var welcome: String
    @Option(name: .long, help: "Ratchet tree file, if the Welcome does not carry it.") var tree: String?

    func run() throws {
        try runMLSCommand {
            let state = common.state
            try state.lock()
            let (_, key) = try state.loadIdentity()
            guard try !state.hasGroup else { throw MLSCLIError.usage("\(state.path) is already in a group") }
            guard case let .welcome(w) = try readMLSMessage(welcome) else { throw MLSCLIError.corrupt("\(welcome) is not a Welcome") }
            var ratchetTree: RatchetTreeNodes?
            if let tree {
                do {
                    ratchetTree = try RatchetTreeNodes(tlsBytes: try readInputFile(tree))
                } catch let error as MLSError {
                    throw MLSCLIError.corrupt("\(tree) is not a ratchet tree: \(error)")
                }
            }
            var found: (KeyPackage, KeyPackagePrivateKeys)?
            for secrets in w.secrets where found == nil {
                found = try state.keyPackage(reference: secrets.newMember, signatureKey: key)
            }
            guard let found else {
                throw MLSCLIError.usage("the Welcome is not for any KeyPackage of \(state.path)")
            }
            let (kp, keys) = found
            let group = try MLSGroup.join(welcome: w, keyPackage: kp, privateKeys: keys, ratchetTree: ratchetTree)
            try state.saveGroup(group)
            // A KeyPackage is for one use: its private keys go once the group holds what it needs.
            try state.deleteKeyPackage(reference: try kp.reference())
            try common.emit("\(Hex.encode(group.groupID)) \(group.epoch)", ["group_id": Hex.encode(group.groupID), "epoch": group.epoch, "leaf_index": group.myLeaf])
        }
    }
}

/// `imprint mls encrypt`: an application message (PrivateMessage).
struct MLSEncrypt: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "encrypt", abstract: "Encrypt an application message.")
    @OptionGroup var common: MLSCommonOptions
    @Option(name: .long, help: "The plaintext, as UTF-8.") var text: String?
    @Option(name: .customLong("in"), help: "Read the plaintext from this file.") var input: String?
    @Option(name: .long, help: "Output file (an MLSMessage).") var out: String

    func run() throws {
        try runMLSCommand {
            let plaintext: [UInt8]
            switch (text, input) {
            case let (text?, nil): plaintext = Array(text.utf8)
            case let (nil, file?): plaintext = try readInputFile(file)
            default: throw MLSCLIError.usage("give exactly one of --text and --in")
            }
            let state = common.state
            try state.lock()
            var group = try state.loadGroup()
            let message = try group.encrypt(plaintext)
            // The sender ratchet moved: persist it before the message leaves, so a
            // crash can never make us reuse a key and nonce.
            try state.saveGroup(group)
            let bytes = message.tlsBytes
            try writeFileAtomically(out, bytes)
            if common.json { try common.emit("", ["epoch": group.epoch, "out": out, "bytes": bytes.count]) }
        }
    }
}

/// `imprint mls process`: an incoming application message, proposal or commit.
struct MLSProcess: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "process",
        abstract: "Process a message: application -> plaintext; commit -> new epoch; proposal -> stored.",
        discussion: "Prints the plaintext exactly (or writes it to --out), the new epoch for a commit, `proposal` for a proposal, or `removed` when a commit removes us (the group state is then deleted)."
    )
    @OptionGroup var common: MLSCommonOptions
    @Option(name: .long, help: "The message (MLSMessage) file.") var msg: String
    @Option(name: .long, help: "Write an application message's plaintext here.") var out: String?

    func run() throws {
        try runMLSCommand {
            let state = common.state
            try state.lock()
            var group = try state.loadGroup()
            let message = try readMLSMessage(msg)
            switch message {
            case .publicMessage, .privateMessage: break
            default: throw MLSCLIError.usage("\(msg) is a \(message.wireFormat), not a group message")
            }
            switch try group.process(message) {
            case let .application(data, sender, _):
                try state.saveGroup(group)
                if let out { try writeFileAtomically(out, data) }
                if common.json {
                    var result: [String: Any] = ["kind": "application", "sender": sender, "epoch": group.epoch, "bytes": data.count,
                                                 "plaintext_base64": Data(data).base64EncodedString()]
                    if let text = String(bytes: data, encoding: .utf8) { result["plaintext"] = text }
                    if let out { result["out"] = out }
                    try common.emit("", result)
                } else if out == nil {
                    FileHandle.standardOutput.write(Data(data))
                }
            case let .proposal(reference):
                try state.saveGroup(group)
                try common.emit("proposal", ["kind": "proposal", "reference": Hex.encode(reference), "epoch": group.epoch])
            case let .commit(epoch):
                try state.saveGroup(group)
                try common.emit("\(epoch)", ["kind": "commit", "epoch": epoch])
            case let .removed(epoch):
                try state.deleteGroup()
                try common.emit("removed", ["kind": "removed", "epoch": epoch])
            }
        }
    }
}

/// `imprint mls remove`: a commit removing one member, applied locally.
struct MLSRemove: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Commit removing a member.")
    @OptionGroup var common: MLSCommonOptions
    @Option(name: .long, help: "The member's name (basic credential identity).") var member: String?
    @Option(name: .long, help: "The member's leaf index.") var index: UInt32?
    @Option(name: .customLong("commit-out"), help: "Commit output file.") var commitOut: String
    @OptionGroup var handshake: MLSHandshakeOptions

    func run() throws {
        try runMLSCommand {
            let state = common.state
            try state.lock()
            var group = try state.loadGroup()
            let leaf: UInt32
            switch (member, index) {
            case let (name?, nil):
                let matches = group.members.filter { $0.credential == .basic(identity: Array(name.utf8)) }
                guard matches.count == 1 else {
                    throw MLSCLIError.usage(matches.isEmpty ? "no member named \(name)" : "\(matches.count) members are named \(name); use --index")
                }
                leaf = matches[0].leafIndex
            case let (nil, i?):
                guard group.members.contains(where: { $0.leafIndex == i }) else { throw MLSCLIError.usage("no member at leaf index \(i)") }
                leaf = i
            default:
                throw MLSCLIError.usage("give exactly one of --member and --index")
            }
            guard leaf != group.myLeaf else { throw MLSCLIError.usage("a member cannot remove itself by commit") }
            let output = try group.commit([.remove(leafIndex: leaf)], options: CommitOptions(encrypt: handshake.privateHandshake))
            try finishCommit(output, group: group, common: common, commitOut: commitOut, welcomeOut: nil)
        }
    }
}

/// `imprint mls update`: a commit with an UpdatePath, committing pending proposals.
struct MLSUpdate: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "update", abstract: "Commit with an UpdatePath (and any pending proposals).")
    @OptionGroup var common: MLSCommonOptions
    @Option(name: .customLong("commit-out"), help: "Commit output file.") var commitOut: String
    @Option(name: .customLong("welcome-out"), help: "Welcome output file, needed when pending Add proposals are committed.") var welcomeOut: String?
    @OptionGroup var handshake: MLSHandshakeOptions

    func run() throws {
        try runMLSCommand {
            let state = common.state
            try state.lock()
            var group = try state.loadGroup()
            let output = try group.commit([], options: CommitOptions(forcePath: true, encrypt: handshake.privateHandshake))
            try finishCommit(output, group: group, common: common, commitOut: commitOut, welcomeOut: welcomeOut)
        }
    }
}

/// `imprint mls export-secret`: MLS-Exporter of the current epoch, hex.
struct MLSExportSecret: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "export-secret", abstract: "Print MLS-Exporter(label, context, length) as hex.")
    @OptionGroup var common: MLSCommonOptions
    @Option(name: .long, help: "Exporter label.") var label: String
    @Option(name: .long, help: "Exporter context, as UTF-8.") var context: String = ""
    @Option(name: .long, help: "Length in bytes.") var length: Int = 32

    func run() throws {
        try runMLSCommand {
            guard (1 ... 65535).contains(length) else { throw MLSCLIError.usage("--length must be in 1...65535") }
            let group = try common.state.loadGroup()
            let secret = Hex.encode(try group.exportSecret(label: label, context: Array(context.utf8), length: length))
            try common.emit(secret, ["secret": secret, "label": label, "context": context, "length": length, "epoch": group.epoch])
        }
    }
}

/// `imprint mls epoch`: the current epoch.
struct MLSEpoch: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "epoch", abstract: "Print the current epoch.")
    @OptionGroup var common: MLSCommonOptions

    func run() throws {
        try runMLSCommand {
            let group = try common.state.loadGroup()
            try common.emit("\(group.epoch)", ["epoch": group.epoch, "group_id": Hex.encode(group.groupID)])
        }
    }
}

/// `imprint mls members`: one line per member, `<leaf index> <name>`.
struct MLSMembers: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "members", abstract: "Print `<leaf index> <name>` for each member.")
    @OptionGroup var common: MLSCommonOptions

    func run() throws {
        try runMLSCommand {
            let group = try common.state.loadGroup()
            let members = group.members.map { m -> (index: UInt32, name: String) in
                switch m.credential {
                case let .basic(identity): (m.leafIndex, String(decoding: identity, as: UTF8.self))
                case .x509: (m.leafIndex, "<x509>")
                }
            }
            try common.emit(members.map { "\($0.index) \($0.name)" }.joined(separator: "\n"),
                            ["members": members.map { ["index": $0.index, "name": $0.name] as [String: Any] }, "epoch": group.epoch])
        }
    }
}
