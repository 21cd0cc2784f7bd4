// Asks google/robotstxt the decisions that robotstxt's TestCorpus writes,
// and times them, for BENCHMARKS.md §3: each decision parses its file and
// decides, as RobotsMatcher::OneAgentAllowedByRobots does. It prints
// Google's answers in TestCorpus's format, and to stderr the wall and CPU
// time a decision took, medians of ROUNDS passes on one thread, and how
// many of its answers differ from the engine's.
//
// Google's code is not in this repository. With google/robotstxt at
// 22b355f checked out in DIR and Debian's libabsl-dev installed:
//
//	g++ -O2 -std=c++17 -I DIR -o harness harness.cc DIR/robots.cc \
//		-labsl_strings -labsl_strings_internal -labsl_raw_logging_internal \
//		-labsl_throw_delegate -labsl_int128
//	./harness CORPUS_DIR DECISIONS_TSV ROUNDS > google.tsv
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>
#include <ctime>
#include <sys/resource.h>
#include "robots.h"

struct Decision { const std::string* body; std::string file, ua, url; bool engine; };

int main(int argc, char** argv) {
  if (argc != 4) { std::cerr << "usage: harness CORPUS_DIR DECISIONS_TSV ROUNDS\n"; return 2; }
  std::string dir = argv[1];
  int rounds = std::atoi(argv[3]);
  std::map<std::string, std::string> bodies;
  std::vector<Decision> ds;
  std::ifstream in(argv[2]);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    Decision d; std::string allowed;
    std::getline(ss, d.file, '\t'); std::getline(ss, d.ua, '\t');
    std::getline(ss, d.url, '\t'); std::getline(ss, allowed, '\t');
    d.engine = allowed == "true";
    if (!bodies.count(d.file)) {
      std::ifstream f(dir + "/" + d.file, std::ios::binary);
      std::stringstream b; b << f.rdbuf();
      bodies[d.file] = b.str();
    }
    ds.push_back(d);
  }
  for (auto& d : ds) d.body = &bodies[d.file];
  std::vector<char> answers(ds.size());
  std::vector<double> perDecision, cpuPerDecision;
  auto cpuNow = [] { rusage ru; getrusage(RUSAGE_SELF, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3; };
  for (int r = 0; r < rounds; r++) {
    double cpu0 = cpuNow();
    auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < ds.size(); i++) {
      googlebot::RobotsMatcher m;
      answers[i] = m.OneAgentAllowedByRobots(*ds[i].body, ds[i].ua, ds[i].url);
    }
    std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
    perDecision.push_back(took.count() / ds.size());
    cpuPerDecision.push_back((cpuNow() - cpu0) / ds.size());
  }
  std::sort(cpuPerDecision.begin(), cpuPerDecision.end());
  std::sort(perDecision.begin(), perDecision.end());
  std::cerr << ds.size() << " decisions, ns per decision (parse and decide), median of " << rounds << ": "
            << perDecision[perDecision.size() / 2] << " (min " << perDecision.front() << ", max " << perDecision.back() << ")"
            << "; cpu-ns per decision, median: " << cpuPerDecision[cpuPerDecision.size() / 2] << "\n";
  size_t differ = 0;
  for (size_t i = 0; i < ds.size(); i++) differ += answers[i] != ds[i].engine;
  std::cerr << differ << " decisions differ from the engine's\n";
  for (size_t i = 0; i < ds.size(); i++)
    std::cout << ds[i].file << '\t' << ds[i].ua << '\t' << ds[i].url << '\t' << (answers[i] ? "true" : "false") << '\n';
}
