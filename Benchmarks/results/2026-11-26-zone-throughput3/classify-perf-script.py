import re,collections,sys
f,server=sys.argv[1],sys.argv[2]
blocks=[b for b in open(f).read().split('\n\n') if b.strip()]
rules=[('SHA-256','SHA256_Update|sha256_block'),('Ed25519 verify (token check)','ImprintEd25519|ServiceAuthVerifier'),('Ed25519 sign / JWT (client)','ServiceAuthSigner|Curve25519|ED25519'),
('fsync','do_fsync'),('open/create files','do_sys_openat2'),('mkdir/stat/access','do_mkdirat|newfstatat|do_faccessat|createDirectory'),('link/unlink','do_linkat|do_unlinkat'),
('file write (copy to page cache)','ext4_buffered_write_iter|ext4_file_write_iter'),('socket receive (kernel copy, page faults)','tcp_recvmsg|sock_read_iter'),('socket send (kernel copy)','tcp_sendmsg'),
('SQLite statement compile','StatementAuthorizer|sqlite3Parser|sqlite3_prepare|sqlite3LockAndPrepare'),('SQLite / GRDB other','sqlite3|GRDB'),('JSON','JSONEncoder|JSONDecoder|RequestBodyReader'),('body pieces into ByteBuffers (client copy)','ByteBufferAllocator|_setBytes|HashingUploadBody'),
('HTTP codec / NIO pipeline / async body sequence','HTTPDecoder|HTTPEncoder|NIOHTTP1|HummingbirdCore|ByteToMessage|NIOThrowingAsyncSequenceProducer|NIOAsyncChannel|AsyncHTTPClient'),
('scheduling, futex, epoll','futex|epoll_wait|__schedule|swift_task_switch|finish_task_switch')]
per=collections.defaultdict(collections.Counter); tot=collections.Counter()
for b in blocks:
    pid=b.split()[0]; tot[pid]+=1
    for name,pat in rules:
        if re.search(pat,b): per[pid][name]+=1; break
    else: per[pid]['other (Swift runtime, malloc, misc)']+=1
for pid in tot:
    print('server' if pid==server else 'client', pid, tot[pid], 'samples')
    for k,v in per[pid].most_common(): print(f"  {100*v/tot[pid]:5.1f}%  {k}")
