// A small program showing ImprintCRDT in use: three writers edit one document while
// "offline", exchange changes in different orders, and end with the same text; then one of
// them reads an old version and a diff between versions.
//
//     swift run sample-coediting
import ImprintCRDT

let alice = Document(actor: .named("alice"))
let body = try alice.change(message: "start") { tx in
    let body = try tx.put(.root, "body", .text)!
    try tx.splice(body, at: 0, insert: "Meeting notes\n")
    return body
}
let start = alice.currentHeads
let bob = try alice.fork(actor: .named("bob"))
let carol = try alice.fork(actor: .named("carol"))

try alice.change { tx in try tx.splice(body, at: 14, insert: "- budget approved\n") }
try bob.change { tx in try tx.splice(body, at: 14, insert: "- hire two engineers\n") }
try carol.change { tx in try tx.splice(body, at: 0, delete: 7, insert: "Team") }

// Every replica receives the others' changes, in a different order each.
try alice.apply(carol.allChanges() + bob.allChanges())
try bob.apply(alice.allChanges())
try carol.apply(bob.allChanges().reversed())

for (name, doc) in [("alice", alice), ("bob", bob), ("carol", carol)] {
    print("\(name): \(try doc.text(body).debugDescription)")
}
print("same heads everywhere: \(alice.currentHeads == bob.currentHeads && bob.currentHeads == carol.currentHeads)")
print("the first version: \(try alice.text(body, at: start).debugDescription)")
for patch in try alice.diff(from: start, to: alice.currentHeads) { print("patch: \(patch)") }
