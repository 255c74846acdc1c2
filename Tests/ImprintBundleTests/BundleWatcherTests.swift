import Foundation
import Testing
@testable import ImprintBundle
import ImprintTestSupport
import ImprintFiles

@Suite struct BundleWatcherTests {
    static let mechanisms: [DirectoryWatchMechanism] = {
        #if os(Linux)
        return [.inotify, .polling]
        #else
        return [.polling]
        #endif
    }()

    func makeWatcher(_ store: BundleStore, _ mechanism: DirectoryWatchMechanism) -> DirectoryWatcher<BundleFingerprint> {
        // With inotify the poll interval is an hour, longer than any wait here, so a wake-up
        // can only come from an inotify event: the test proves the mechanism by construction,
        // not by timing how fast it woke.
        let watcher = DirectoryWatcher<BundleFingerprint>(layout: store.layout, ignoring: store.device,
                                    pollInterval: mechanism == .inotify ? .seconds(3600) : .milliseconds(50),
                                    forcePolling: mechanism == .polling)
        return watcher
    }

    /// Runs `change` on another thread after a short delay and waits for the watcher; returns
    /// the fingerprint once the change is complete, so the next step starts from a quiet bundle.
    func expectWake(_ watcher: DirectoryWatcher<BundleFingerprint>, since fingerprint: BundleFingerprint, _ label: String,
                    change: @escaping @Sendable () throws -> Void) throws -> BundleFingerprint {
        let done = DispatchSemaphore(value: 0)
        let failure = LockedBox<String?>(nil)
        let changeStarted = LockedBox<ContinuousClock.Instant?>(nil)
        let thread = Thread {
            usleep(100_000)
            changeStarted.set(ContinuousClock.now)
            do { try change() } catch { failure.set("\(error)") }
            done.signal()
        }
        thread.start()
        // The timeout only bounds a broken watcher; it is far above any machine's delay.
        let next = try watcher.waitForChange(since: fingerprint, timeout: .seconds(60))
        let wokeAt = ContinuousClock.now
        done.wait()
        #expect(failure.get() == nil, "\(label): the change itself failed")
        #expect(next != nil, "\(label): no wake-up")
        if let started = changeStarted.get() {
            #expect(wokeAt >= started, "\(label): woke before the change")
        }
        return try watcher.fingerprint()
    }

    @Test(arguments: mechanisms)
    func wakesForOtherMachinesFilesOnly(_ mechanism: DirectoryWatchMechanism) throws {
        let dir = TemporaryDirectory("watch")
        let laptop = try BundleStore.create(at: dir.file("paper.imprint"), device: DeviceID("laptop"),
                                            metadata: BundleMetadata(documentID: "w", title: "", created: Date(timeIntervalSince1970: 0)))
        let watcher = makeWatcher(laptop, mechanism)
        #expect(watcher.mechanism == mechanism)
        var fingerprint = try watcher.fingerprint()

        // This device's own appends (and its lock file) do not count as a change.
        try laptop.append([record("own")])
        #expect(try watcher.waitForChange(since: fingerprint, timeout: .milliseconds(300)) == nil)

        let root = laptop.layout.root
        fingerprint = try expectWake(watcher, since: fingerprint, "another device's log") {
            let phone = try BundleStore.open(at: root, device: DeviceID("phone"))
            try phone.append([record("from phone")])
        }
        fingerprint = try expectWake(watcher, since: fingerprint, "a conflict copy of the own log") {
            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: root + "/changes/laptop (conflicted copy).log"))
        }
        fingerprint = try expectWake(watcher, since: fingerprint, "a duplicate bundle") {
            _ = try BundleStore.create(at: dir.file("paper 2.imprint"), device: DeviceID("x"),
                                       metadata: BundleMetadata(documentID: "w", title: "", created: Date(timeIntervalSince1970: 0)))
        }
        _ = try expectWake(watcher, since: fingerprint, "metadata rewritten elsewhere") {
            try BundleMetadata(documentID: "w", title: "new", created: Date(timeIntervalSince1970: 0)).write(to: root + "/metadata.json")
        }
    }
}

/// A value shared with a helper thread.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func get() -> Value { lock.lock(); defer { lock.unlock() }; return value }
    func set(_ newValue: Value) { lock.lock(); value = newValue; lock.unlock() }
}
