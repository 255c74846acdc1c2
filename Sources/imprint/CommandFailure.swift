import ArgumentParser
import Foundation
import ImprintBundle
import ImprintCRDT
import ImprintDelivery
import ImprintKeys
import ImprintMLS
import ImprintSnapshot
import ImprintStore
import ImprintSync
import ImprintZones
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed command as the CLI reports it: one `error:` line and an exit status.
struct CommandFailure: Error {
    /// Exit statuses of contracts/cli.md.
    enum Status: Int32 {
        /// Usage or user error.
        case user = 1
        /// Corrupt or hostile data.
        case data = 2
    }

    var message: String
    var status: Status
    /// False when the error came from outside Imprint's modules (the argument parser).
    var isFromImprint = true

    init(message: String, status: Status) {
        self.message = message
        self.status = status
    }

    /// Classifies any error thrown by a command.
    init(_ error: any Error) {
        switch error {
        case let failure as CommandFailure:
            self = failure
        case let error as StoreError:
            self.init(message: error.description, status: error.isHostileOrCorrupt ? .data : .user)
        case let error as BundleError:
            self.init(message: error.description, status: error.isHostileOrCorrupt ? .data : .user)
        case let error as FileError:
            self.init(BundleError(error))
        case let error as SyncError:
            let data: [SyncError.Code] = [.invalidPayload, .credentialMismatch, .forkDetected, .externalCommit, .missingCommit]
            self.init(message: error.description, status: data.contains(error.code) ? .data : .user)
        case let error as MLSError:
            self.init(message: "mls: \(error)", status: .data)
        case let error as KeyStoreError:
            self.init(message: error.description, status: error == .corrupt || error == .unsupportedVersion ? .data : .user)
        case let error as DeliveryServiceError:
            self.init(message: "server: \(error.description)", status: .user)
        case let error as ZoneError:
            self.init(message: "zone: \(error)", status: [.assetCorrupt, .damagedRecord, .payloadHashMismatch, .inconsistentChunk, .duplicateChunk].contains(error.code) ? .data : .user)
        case let error as ReviewSnapshotError:
            let data: [ReviewSnapshotError.Code] = [.malformed, .tooLarge, .decryptionFailed, .invalidComment, .wrongSnapshot, .compression]
            self.init(message: "snapshot: \(error)", status: data.contains(error.code) ? .data : .user)
        case let error as CRDTError:
            let store = StoreError.engine(error)
            self.init(message: store.description, status: store.isHostileOrCorrupt ? .data : .user)
        default:
            self.init(message: String(describing: error), status: .user)
            isFromImprint = false
        }
    }

    /// A user error with `message`.
    static func user(_ message: String) -> CommandFailure { CommandFailure(message: message, status: .user) }

    /// Prints `error: <message>` (one line) on stderr and exits with the status.
    static func report(_ failure: CommandFailure) -> Never {
        let line = failure.message.split(whereSeparator: \.isNewline).joined(separator: " ")
        fflush(nil)
        FileHandle.standardError.write(Data("error: \(line)\n".utf8))
        exit(failure.status.rawValue)
    }
}
