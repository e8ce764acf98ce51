#!/usr/bin/env python3
"""Bitwise comparison of two .npy files of uint16 bit patterns (bf16/fp16), without numpy:
    python3 scripts/npy_bits_compare.py A.npy B.npy
prints how many elements are identical and the largest difference in units of the last place
(sign-magnitude order, so values of opposite sign near zero count as far apart)."""
import array, sys, ast
def load(p):
    b=open(p,'rb').read()
    major=b[6]; hl=int.from_bytes(b[8:10],'little') if major==1 else int.from_bytes(b[8:12],'little')
    off=10 if major==1 else 12
    hdr=ast.literal_eval(b[off:off+hl].decode())
    a=array.array('H'); a.frombytes(b[off+hl:]); return a
a=load(sys.argv[1]); b=load(sys.argv[2])
same=sum(1 for x,y in zip(a,b) if x==y)
def val(x):
    import struct; return struct.unpack('f', struct.pack('I', x<<16))[0]
ulps=[abs((x if x<0x8000 else -(x-0x8000)) - (y if y<0x8000 else -(y-0x8000))) for x,y in zip(a,b)]
print(f"{same}/{len(a)} identical ({100*same/len(a):.2f}%), max ulp diff {max(ulps)}")
