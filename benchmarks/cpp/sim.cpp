// A minimal event loop with a binary heap: the near-physical-limit reference
// of the simulator benchmark (benchmarks/bench_sim.py).  Single-server FCFS
// stations with exponential service, count-based state (no job identities,
// no statistics beyond the event count), blocking after service for stations
// with finite room.  Compiled at bench time with g++ -O2.
//
// usage: sim MODEL N SEED
//   MODEL mm1     open M/M/1, lambda = 1, S = 0.8; N customers arrive
//   MODEL closed4 closed cycle of 4 stations (S = 1.0, 1.1, 1.2, 1.3), 20 jobs;
//                 N service completions
//   MODEL tandem  open tandem, lambda = 1, S = 0.5, 0.7, 0.8, room 4 at
//                 stations 2 and 3; N customers arrive
// prints: events seconds cpu-seconds   (events = arrivals at + departures from stations)
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <queue>
#include <random>
#include <utility>
#include <vector>

typedef std::pair<double, int> Ev;  // (time, station; -1 = external arrival)

struct Sim {
    std::priority_queue<Ev, std::vector<Ev>, std::greater<Ev>> heap;
    std::mt19937_64 gen;
    std::uniform_real_distribution<double> uni{0.0, 1.0};
    std::vector<double> S;
    std::vector<int> cap, next, n;
    std::vector<char> busy;
    std::vector<std::deque<int>> blockedq;  // stations blocked on this one
    double now = 0.0;
    long long events = 0;

    double expo(double mean) { return -mean * std::log(1.0 - uni(gen)); }
    void start(int k) { busy[k] = 1; heap.push(Ev(now + expo(S[k]), k)); }
    void arrive(int k) {
        ++n[k];
        ++events;
        if (!busy[k]) start(k);
    }
    void depart(int k) {
        --n[k];
        ++events;
        busy[k] = 0;
        if (n[k] > 0) start(k);
        if (!blockedq[k].empty()) {   // room freed: the first blocked job moves in
            int u = blockedq[k].front();
            blockedq[k].pop_front();
            depart(u);
            arrive(k);
        }
    }
    void complete(int k) {
        int d = next[k];
        if (d >= 0 && n[d] >= cap[d]) { blockedq[d].push_back(k); return; }  // keeps its server
        depart(k);
        if (d >= 0) arrive(d);
    }
};

int main(int argc, char** argv) {
    if (argc < 4) { std::fprintf(stderr, "usage: sim MODEL N SEED\n"); return 2; }
    const char* model = argv[1];
    long long N = std::atoll(argv[2]);
    Sim s;
    s.gen.seed(std::strtoull(argv[3], nullptr, 10));
    const int INF = 1 << 30;
    double lam = 1.0;
    bool open = true;
    if (!std::strcmp(model, "mm1")) {
        s.S = {0.8}; s.cap = {INF}; s.next = {-1};
    } else if (!std::strcmp(model, "closed4")) {
        s.S = {1.0, 1.1, 1.2, 1.3}; s.cap = {INF, INF, INF, INF}; s.next = {1, 2, 3, 0};
        open = false;
    } else if (!std::strcmp(model, "tandem")) {
        s.S = {0.5, 0.7, 0.8}; s.cap = {INF, 4, 4}; s.next = {1, 2, -1};
    } else { std::fprintf(stderr, "unknown model %s\n", model); return 2; }
    int K = (int)s.S.size();
    s.n.assign(K, 0); s.busy.assign(K, 0); s.blockedq.resize(K);
    std::timespec ts0;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts0);
    double cpu0 = ts0.tv_sec + 1e-9 * ts0.tv_nsec;
    auto t0 = std::chrono::steady_clock::now();
    long long count = 0;
    if (open) {
        s.heap.push(Ev(s.expo(1.0 / lam), -1));
    } else {
        for (int j = 0; j < 20; ++j) s.arrive(0);
    }
    while (!s.heap.empty()) {
        Ev e = s.heap.top();
        s.heap.pop();
        s.now = e.first;
        if (e.second < 0) {
            if (count >= N) continue;   // no more arrivals: drain
            ++count;
            s.heap.push(Ev(s.now + s.expo(1.0 / lam), -1));
            if (s.n[0] >= s.cap[0]) { ++s.events; continue; }  // lost
            s.arrive(0);
        } else {
            s.complete(e.second);
            if (!open && ++count >= N) break;
        }
    }
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    std::printf("%lld %.9f %.9f\n", s.events, dt, ts.tv_sec + 1e-9 * ts.tv_nsec - cpu0);
    return 0;
}
