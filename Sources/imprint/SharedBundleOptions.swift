import ArgumentParser
import Foundation
import ImprintSync

/// What every command on a shared bundle takes: the bundle, where the identity lives
/// (`AccountOptions`), the device, `--json`; and the one way they open the shared document.
struct SharedBundleOptions: ParsableArguments {
    @Argument(help: "The bundle.") var bundle: String
    @OptionGroup var account: AccountOptions
    @OptionGroup var device: DeviceOptions
    @Flag(help: "Print one JSON object.") var json = false

    /// Opens the shared document (its server unless `--server` says otherwise) and runs
    /// `body` on it; `writes` says whether the command writes under this device's id.
    func withDocument<T: Sendable>(writes: Bool = true, adjusting adjust: (inout SyncOptions) -> Void = { _ in },
                                   _ body: @escaping @Sendable (SharedDocument, SyncAccount) async throws -> T) throws -> T {
        var adjusted = try account.account(forBundle: bundle)
        adjust(&adjusted.options)
        let sync = adjusted
        let (path, id) = (bundle, writes ? try device.resolve() : device.resolveForReading())
        return try runBlocking {
            let doc = try await SharedDocument.open(bundleAt: path, device: id, account: sync)
            let result = try await body(doc, sync)
            // Inbox copies a push left on their way (a recipient's slow server) arrive before
            // the process ends, instead of waiting for the next run.
            await doc.finishInboxCopies()
            return result
        }
    }
}
