import ImprintServer

/// `fetchChanges`' token rules and paging, shared by both backends.
enum ZoneChangeFeed {
    /// The change number to read after: 0 without a token; 410 `ChangeTokenExpired` for a token
    /// of another incarnation of the zone, beyond its newest change, or from before purged
    /// history (tombstones, a compaction) that its reader has not seen past (`ChangeToken`).
    static func start(_ since: String?, zone: ZoneRow) throws -> Int64 {
        guard let since else { return 0 }
        guard let token = ChangeToken(parsing: since), token.incarnation == zone.incarnation,
              token.change <= zone.lastChange, token.isPast(purgedThrough: zone.purgedThrough)
        else { throw DeliveryError.changeTokenExpired() }
        return token.change
    }

    /// A page from up to `limit + 1` rows read in change order after `start`.
    static func page(_ rows: [RecordRow], zone: ZoneRow, start: Int64, limit: Int) -> FetchChangesOutput {
        let page = rows.prefix(limit)
        // A reader that got everything has seen the zone up to its newest change, which may
        // have no row (a purged tombstone, a compaction): answering with that change keeps the
        // token valid after the purge moved `purgedThrough` past every remaining row. (The
        // zone row is read before the records, and a change is committed with its row, so
        // every change up to it is among the rows read.)
        let last = rows.count > limit ? page.last!.change : max(page.last?.change ?? start, zone.lastChange)
        // A page read now reflects every purge up to `purgedThrough` (the zone row is read
        // before the records): the next page's token may start below it (`ChangeToken`).
        return FetchChangesOutput(
            records: page.map { $0.record(incarnation: zone.incarnation) },
            changeToken: ChangeToken(incarnation: zone.incarnation, change: last, floor: zone.purgedThrough).text,
            moreComing: rows.count > limit)
    }
}
