import ArgumentParser
import AsyncHTTPClient
import Foundation
import ImprintStore
import ImprintSync
import ImprintZones
import ImprintEncoding
import ImprintTestSupport
import NIOCore

extension SyncBenchmark {
    /// `mailbox`: the cost of mailbox delivery for one sender. One document of `--members`
    /// members (added in one commit; each makes its inbox zone) with a mailbox threshold of 1,
    /// and one of the same members without a threshold; the sharer pushes `--edits` change sets
    /// (a short word each, or `--edit-bytes` random letters) into each, alternately, and the
    /// time of each push is taken: `sendMessage`, the shared-zone save and, in mailbox mode,
    /// the copy saved into every recipient's inbox (one `saveToInboxes` request per 400
    /// recipients, sent concurrently). Requests and request-body bytes per send
    /// are measured: the server's counters (`/metrics`) read before and after each push.
    func mailbox(directory: String, serverURL: String) async throws -> [(String, String)] {
        let count = max(2, members ?? 3)
        let sender = try await BenchMember.make("sender", directory: directory, serverURL: serverURL)
        var others: [BenchMember] = []
        for index in 1..<count {
            others.append(try await BenchMember.make("r\(index)", directory: directory, serverURL: serverURL))
        }
        if !json { FileHandle.standardError.write(Data("mailbox: \(count) identities\n".utf8)) }
        // Each recipient's inbox exists before the run (a member makes it when its client
        // first sees the group past the threshold).
        for member in others { _ = try? await member.account.zones.createZone("inbox_\(member.account.did)", convoId: nil) }

        func document(_ name: String, threshold: Int?) async throws -> SharedDocument {
            let path = directory + "/\(name).imprint"
            _ = try DocumentBundle.create(at: path, device: sender.device, title: name)
            let doc = try await SharedDocument.share(bundleAt: path, device: sender.device, account: sender.account,
                                                     mailboxThreshold: threshold)
            try await doc.invite(others.map(\.account.did))
            return doc
        }
        let mailboxDoc = try await document("mailbox", threshold: 1)
        let sharedDoc = try await document("shared", threshold: nil)
        if !json { FileHandle.standardError.write(Data("mailbox: both documents shared with \(count) members\n".utf8)) }

        // Large edits: seeded random letters (the same bytes every run), which zstd cannot
        // shrink much.
        var rng = SplitMix64(seed: 0x3A11_B0C5)
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        func word(_ index: Int) -> String {
            guard let editBytes else { return "w\(index) " }
            return String((0..<editBytes).map { _ in letters.randomElement(using: &rng)! })
        }
        var mailboxMs: [Double] = [], sharedMs: [Double] = []
        var payloadBytes: [Int] = []
        var mailboxTraffic: [ServerTraffic] = [], sharedTraffic: [ServerTraffic] = []
        for index in 0..<edits {
            for (doc, isMailbox) in [(mailboxDoc, true), (sharedDoc, false)] {
                let text = word(index)
                try await doc.edit { bundle in try bundle.insert(text, at: 0) }
                let before = try await ServerTraffic.read(serverURL)
                let start = ContinuousClock.now
                let report = try await doc.push()
                await doc.finishInboxCopies()  // until the last inbox copy is saved
                let ms = (ContinuousClock.now - start).inMilliseconds
                let traffic = try await ServerTraffic.read(serverURL) - before
                if isMailbox {
                    mailboxMs.append(ms)
                    payloadBytes.append(report.bytes)
                    mailboxTraffic.append(traffic)
                } else {
                    sharedMs.append(ms)
                    sharedTraffic.append(traffic)
                }
            }
        }
        let pending = await mailboxDoc.status().inboxCopiesPending
        guard pending == 0 else { throw ValidationError("mailbox: \(pending) inbox copies still pending") }
        // Every recipient's inbox holds every message.
        let probe = others[others.count / 2]
        let held = try await probe.account.zones.fetchChanges(zoneId: "inbox_\(probe.account.did)", since: nil, limit: 1000).records.count
        let payload = Clock.median(payloadBytes.map(Double.init))
        let recipients = count - 1
        return [
            ("members", "\(count)"), ("edits", "\(edits)"), ("edit_bytes", "\(editBytes ?? 0)"),
            ("mailbox_push_p50_ms", Clock.format(Clock.median(mailboxMs))),
            ("mailbox_push_p99_ms", Clock.format(Clock.percentile(mailboxMs, 0.99))),
            ("shared_push_p50_ms", Clock.format(Clock.median(sharedMs))),
            ("shared_push_p99_ms", Clock.format(Clock.percentile(sharedMs, 0.99))),
            ("ratio_p50", Clock.format(Clock.median(mailboxMs) / Clock.median(sharedMs))),
            ("payload_bytes", Clock.format(payload)),
            // Measured (medians): every request of the push and its body, JSON and base64 included.
            ("recipients", "\(recipients)"),
            ("mailbox_requests_per_send", Clock.format(Clock.median(mailboxTraffic.map(\.requests)))),
            ("shared_requests_per_send", Clock.format(Clock.median(sharedTraffic.map(\.requests)))),
            ("mailbox_bytes_per_send", Clock.format(Clock.median(mailboxTraffic.map(\.bytes)))),
            ("shared_bytes_per_send", Clock.format(Clock.median(sharedTraffic.map(\.bytes)))),
            ("probe_inbox_records", "\(held)"),
        ]
    }
}

/// Requests and request-body bytes (`Content-Length`) an `imprint-server` has counted, from
/// its `/metrics`; the scrapes themselves are left out.
struct ServerTraffic {
    var requests = 0.0
    var bytes = 0.0

    static func - (after: ServerTraffic, before: ServerTraffic) -> ServerTraffic {
        ServerTraffic(requests: after.requests - before.requests, bytes: after.bytes - before.bytes)
    }

    static func read(_ serverURL: String) async throws -> ServerTraffic {
        let response = try await benchHTTPClient.execute(HTTPClientRequest(url: serverURL + "/metrics"), timeout: .seconds(10))
        let text = String(buffer: try await response.body.collect(upTo: 16 << 20))
        var traffic = ServerTraffic()
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.contains("route=\"metrics\"") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            if line.hasPrefix("imprint_http_requests_total{") { traffic.requests += value }
            if line.hasPrefix("imprint_http_request_body_bytes_total{") { traffic.bytes += value }
        }
        return traffic
    }
}
