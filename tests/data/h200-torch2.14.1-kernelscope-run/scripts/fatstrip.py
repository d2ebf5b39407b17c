import struct, sys, collections, mmap
def section(path, name):
    out=[]
    import subprocess
    for l in subprocess.check_output(["readelf","-SW",path],text=True).splitlines():
        if f" {name} " in l:
            p=l.split(']')[1].split()
            out.append((int(p[3],16), int(p[4],16)))
    return out[0]
def walk(buf, off, size, stats, strip_keep=None):
    end=off+size; p=off; nblobs=0; zeroed=0
    while p < end:
        magic,ver,hsz,fsz = struct.unpack_from("<IHHQ", buf, p)
        if magic != 0xBA55ED50:
            # padding
            p += 8; continue
        nblobs+=1
        q=p+hsz; bend=p+hsz+fsz; entries=[]
        while q < bend:
            kind,ev,ehsz,padsz = struct.unpack_from("<HHII", buf, q)
            # fields after: unknown0 u32, payload size u32, ..., sm at offset 28
            flags = struct.unpack_from("<Q", buf, q+16)[0] if False else None
            sm = struct.unpack_from("<I", buf, q+28)[0]
            entries.append((kind, sm, q, ehsz, padsz))
            q += ehsz + padsz
        sms = {(k,s) for k,s,_,_,_ in entries}
        has90 = any(k==2 and s==90 for k,s,_,_,_ in entries)
        for k,s,eq,eh,ps in entries:
            stats[(k,s,has90)] += ps
            if strip_keep is not None and has90 and not (k==2 and s==90):
                buf[eq+eh:eq+eh+ps] = b"\0"*ps; zeroed += ps
        p = bend
    return nblobs, zeroed
path=sys.argv[1]; strip = len(sys.argv)>2 and sys.argv[2]=="strip"
off,size=section(path,".nv_fatbin")
f=open(path,"r+b" if strip else "rb"); buf=mmap.mmap(f.fileno(),0, access=mmap.ACCESS_WRITE if strip else mmap.ACCESS_READ)
stats=collections.Counter()
n,z=walk(buf,off,size,stats, strip_keep=90 if strip else None)
print(path, "blobs",n,"section",size/1e6,"MB zeroed",z/1e6)
for k,v in sorted(stats.items()): print("  kind",k[0],"sm",k[1],"has90",k[2], round(v/1e6,2),"MB")
if strip: buf.flush()
