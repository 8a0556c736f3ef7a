/*
 * fx_cxx.cpp - opreport fixture: C++ symbols to demangle (a member function
 * taking std::string, a template, a function in a namespace);
 * argv[1] = milliseconds to run.
 *
 * SPDX-License-Identifier: MIT
 */
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace fx {

volatile std::uint64_t sink;

struct Worker {
	__attribute__((noipa)) void spin(const std::string &tag, int rounds);
};

void Worker::spin(const std::string &tag, int rounds)
{
	std::uint64_t x = tag.size();

	for (int i = 0; i < rounds; i++)
		x = x * 6364136223846793005ull + 1;
	sink += x;
}

template <class T> struct Box {
	T v;
	__attribute__((noipa)) T get(int rounds) const
	{
		T x = v;

		for (int i = 0; i < rounds; i++)
			x = x * 3 + 1;
		return x;
	}
};

__attribute__((noipa)) int helper(int rounds)
{
	Box<int> b{ 7 };

	return b.get(rounds);
}

} // namespace fx

int main(int argc, char **argv)
{
	using clock = std::chrono::steady_clock;
	auto end = clock::now() + std::chrono::milliseconds(argc > 1 ? std::atoi(argv[1]) : 0);
	fx::Worker w;

	do {
		w.spin("fixture", 3000000);
		fx::sink += (std::uint64_t)fx::helper(1000000);
	} while (clock::now() < end);
	std::puts("fx_cxx done");
	return 0;
}
