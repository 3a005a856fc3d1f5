#!/usr/bin/env python3
"""Derives the expected random placements of the tests independently of infracc.

MT19937-64 (Matsumoto & Nishimura) with the constants of the C++ standard's
std::mt19937_64, checked against the standard's own reference value below; then the
draw and shuffle rules of passes/Placing.h (rejection sampling, Fisher-Yates from the
end). Prints the permutation of 0..n-1 for a few seeds: python3 mt19937_64.py 6
"""
class MT64:
    def __init__(self, seed):
        self.mt = [0]*312
        self.mt[0] = seed & 0xFFFFFFFFFFFFFFFF
        for i in range(1, 312):
            self.mt[i] = (6364136223846793005 * (self.mt[i-1] ^ (self.mt[i-1] >> 62)) + i) & 0xFFFFFFFFFFFFFFFF
        self.i = 312
    def __call__(self):
        if self.i >= 312:
            for k in range(312):
                x = (self.mt[k] & 0xFFFFFFFF80000000) | (self.mt[(k+1) % 312] & 0x7FFFFFFF)
                xa = x >> 1
                if x & 1: xa ^= 0xB5026F5AA96619E9
                self.mt[k] = self.mt[(k+156) % 312] ^ xa
            self.i = 0
        y = self.mt[self.i]; self.i += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        y ^= y >> 43
        return y & 0xFFFFFFFFFFFFFFFF
M = 0xFFFFFFFFFFFFFFFF
def below(rng, n):
    limit = M - ((M % n + 1) % n)
    while True:
        x = rng()
        if x <= limit: return x % n
def shuffle(v, rng):
    for i in range(len(v), 1, -1):
        j = below(rng, i); v[i-1], v[j] = v[j], v[i-1]
    return v
r = MT64(5489)
for _ in range(9999): r()
print("10000th of default seed:", r(), "(standard: 9981545732273789042)")
import sys
n = int(sys.argv[1]) if len(sys.argv) > 1 else 6
for seed in (1, 2, 3, 7):
    print(seed, shuffle(list(range(n)), MT64(seed)))
