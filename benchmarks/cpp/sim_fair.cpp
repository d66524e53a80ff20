// The fair C++ reference of the simulator benchmark (benchmarks/bench_sim.py):
// the loop of sim.cpp keeping the statistics qmodels' event loop keeps
// (qmodels/sim/engine.py), so that the two do the same work per event:
//
//   * jobs with identities (a job table: class, arrival time at the station,
//     start of the cycle), FCFS queues of job ids, a free list of job rows;
//   * per (class, station): the time-integral of the number present and of
//     the number in service (time-averaged queue lengths and utilisations),
//     completions and the sum of sojourn times (response times);
//   * per class: completed cycles (open: network visits), the sum of cycle
//     times and a histogram of cycle times on a log scale (4096 bins over 10
//     decades, one histogram per batch: the percentiles);
//   * batch means: a copy of every accumulator at each of 1000 equally
//     spaced cell edges; at the end MSER-5 truncation on the number present,
//     20 batches of whole segments, Student-t half-widths, percentiles.
//
// Single-server FCFS stations with exponential service, blocking after
// service at stations with finite room, as sim.cpp; and two more models
// (issue 32): a non-preemptive priority M/M/1 with two open classes (one
// FCFS queue per class, the higher class served first, as qmodels' "prio"
// station) and an open fork-join (station 0 forks a task into each of the
// other stations, single-server FCFS branches; the job leaves when the
// last task joins; the tasks have job-table rows of their own, as in
// qmodels).  g++ -O2.
//
// usage: sim_fair MODEL HORIZON SEED [-v]
//   MODEL mm1 | closed4 | tandem (the models of sim.cpp) | prio2 | fj3;
//   HORIZON simulated time
// prints: events seconds cpu-seconds checksum   (-v: also the estimates)
#include <algorithm>
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

typedef std::pair<double, int> Ev;  // (time, entity: -1 - c open arrival of class c, else job)

static const int NCELL = 1000, CELLS_PER_SEG = 50, NBATCH = 20, HIST_BINS = 4096;

struct Sim {
    int C = 1, K = 0;
    std::priority_queue<Ev, std::vector<Ev>, std::greater<Ev>> heap;
    std::mt19937_64 gen;
    std::uniform_real_distribution<double> uni{0.0, 1.0};
    // model
    std::vector<double> S;           // mean service time, per station (one class)
    std::vector<int> cap, next;      // room (service place included); next station, -1 = leave,
                                     // -2 = join at the fork-join (station 0)
    bool open = true;
    bool prio = false;               // station 0 serves by class priority (0 highest)
    bool forkjoin = false;           // station 0 is a fork-join of stations 1..K-1
    std::vector<double> lam{1.0};    // open arrival rate per class
    // jobs
    std::vector<int> jcls, jpar, jpend;  // class; fork-join: parent (-1: a job), tasks to join
    std::vector<double> jtarr, jtcyc;
    std::vector<int> freelist;
    // stations
    std::vector<int> n, busy;                 // present, in service (or blocked holding it)
    std::vector<int> nc, bs;                  // per (class, station)
    std::vector<double> tlast;                // last change of station k's counts
    std::vector<std::deque<int>> waitq;       // FCFS queue of job ids
    std::vector<std::deque<int>> pq;          // priority station: one FCFS queue per class
    std::vector<std::deque<int>> blockedq;    // jobs blocked on this station (at the previous one)
    std::vector<int> at;                      // station of job j
    // statistics: [area_n | area_u | comp | soj] per (class, station), [cycles | cycle time]
    // per class, events
    std::vector<double> acc;
    int o_an, o_au, o_comp, o_soj, o_cyc, o_cyct, o_ev;
    std::vector<double> snap, edges;
    std::vector<long long> hist;              // [segment][class][bin]
    double hlo, hinv;
    int cell = 0;
    double now = 0.0;

    double expo(double mean) { return -mean * std::log(1.0 - uni(gen)); }

    void setup(double horizon) {
        int CK = C * K;
        o_an = 0; o_au = CK; o_comp = 2 * CK; o_soj = 3 * CK; o_cyc = 4 * CK;
        o_cyct = 4 * CK + C; o_ev = 4 * CK + 2 * C;
        acc.assign(o_ev + 1, 0.0);
        n.assign(K, 0); busy.assign(K, 0); nc.assign(CK, 0); bs.assign(CK, 0);
        tlast.assign(K, 0.0); waitq.resize(K); blockedq.resize(K); pq.resize(C);
        snap.assign((size_t)NCELL * acc.size(), 0.0);
        for (int i = 1; i <= NCELL; ++i) edges.push_back(horizon * i / NCELL);
        hist.assign((size_t)(NCELL / CELLS_PER_SEG + 1) * C * HIST_BINS, 0);
        double scale = 0.0;
        for (double s : S) scale += s;
        hlo = std::log(scale * 1e-4);
        hinv = HIST_BINS / (std::log(10.0) * 10.0);
    }
    int new_job(int c) {
        int j;
        if (freelist.empty()) {
            j = (int)jcls.size();
            jcls.push_back(c); jtarr.push_back(0.0); jtcyc.push_back(0.0); at.push_back(-1);
            jpar.push_back(-1); jpend.push_back(0);
        } else {
            j = freelist.back();
            freelist.pop_back();
            jcls[j] = c;
        }
        return j;
    }
    void flush(int k, double t) {
        double dt = t - tlast[k];
        if (dt > 0.0 && n[k] > 0) {
            for (int c = 0; c < C; ++c) {
                acc[o_an + c * K + k] += dt * nc[c * K + k];
                acc[o_au + c * K + k] += dt * bs[c * K + k];
            }
        }
        tlast[k] = t;
    }
    void record_cycle(int c, double dt) {
        acc[o_cyc + c] += 1.0;
        acc[o_cyct + c] += dt;
        int b = 0;
        if (dt > 0.0) {
            b = (int)((std::log(dt) - hlo) * hinv);
            b = b < 0 ? 0 : (b >= HIST_BINS ? HIST_BINS - 1 : b);
        }
        int seg = std::min(cell, NCELL - 1) / CELLS_PER_SEG;
        ++hist[((size_t)seg * C + c) * HIST_BINS + b];
    }
    void pass_edges(double tnext) {
        while (cell < NCELL && edges[cell] <= tnext) {
            for (int k = 0; k < K; ++k) flush(k, edges[cell]);
            std::copy(acc.begin(), acc.end(), snap.begin() + (size_t)cell * acc.size());
            ++cell;
        }
    }
    void start(int j, int k) {
        ++busy[k];
        ++bs[jcls[j] * K + k];
        heap.push(Ev(now + expo(S[k]), j));
    }
    void arrive(int j, int k) {
        int c = jcls[j];
        flush(k, now);
        ++n[k];
        ++nc[c * K + k];
        jtarr[j] = now;
        at[j] = k;
        acc[o_ev] += 1.0;
        if (busy[k] == 0) start(j, k);
        else if (prio && k == 0) pq[c].push_back(j);
        else waitq[k].push_back(j);
    }
    void fork(int j) {                // job j reaches the fork-join (station 0)
        int c = jcls[j];
        flush(0, now);
        ++n[0];
        ++nc[c * K];
        jtarr[j] = now;
        at[j] = 0;
        acc[o_ev] += 1.0;
        jpend[j] = K - 1;
        for (int b = 1; b < K; ++b) {
            int t = new_job(c);
            jpar[t] = j;
            jtcyc[t] = now;
            arrive(t, b);
        }
    }
    void join(int t) {                // task t (its branch done) joins its parent
        int p = jpar[t], c = jcls[p];
        jpar[t] = -1;
        freelist.push_back(t);
        if (--jpend[p] > 0) return;
        flush(0, now);                // the last one: the job leaves the fork-join
        --n[0];
        --nc[c * K];
        acc[o_comp + c * K] += 1.0;
        acc[o_soj + c * K] += now - jtarr[p];
        acc[o_ev] += 1.0;
        record_cycle(c, now - jtcyc[p]);
        freelist.push_back(p);
    }
    void depart(int j, int k) {
        int c = jcls[j];
        flush(k, now);
        --n[k];
        --nc[c * K + k];
        --bs[c * K + k];
        --busy[k];
        acc[o_comp + c * K + k] += 1.0;
        acc[o_soj + c * K + k] += now - jtarr[j];
        acc[o_ev] += 1.0;
        if (prio && k == 0) {
            for (int q = 0; q < C; ++q)
                if (!pq[q].empty()) {
                    int h = pq[q].front();
                    pq[q].pop_front();
                    start(h, k);
                    break;
                }
        } else if (!waitq[k].empty()) {
            int h = waitq[k].front();
            waitq[k].pop_front();
            start(h, k);
        }
        if (!blockedq[k].empty()) {   // room freed: the first job blocked on k moves in
            int u = blockedq[k].front();
            blockedq[k].pop_front();
            move(u, at[u], k);
        }
    }
    void move(int j, int k, int d) {  // j leaves station k for d (-1: end of route)
        depart(j, k);
        if (d >= 0) {
            if (!open && d == 0) {     // the reference station: a cycle ends and begins
                record_cycle(jcls[j], now - jtcyc[j]);
                jtcyc[j] = now;
            }
            arrive(j, d);
        } else {
            record_cycle(jcls[j], now - jtcyc[j]);
            freelist.push_back(j);
        }
    }
    void complete(int j) {
        int k = at[j], d = next[k];
        if (d == -2) { depart(j, k); join(j); return; }
        if (d >= 0 && n[d] >= cap[d]) { blockedq[d].push_back(j); return; }  // keeps its server
        move(j, k, d);
    }
    double run(double horizon) {
        if (open) {
            for (int c = 0; c < C; ++c) heap.push(Ev(expo(1.0 / lam[c]), -1 - c));
        } else {
            for (int i = 0; i < 20; ++i) {
                int j = new_job(0);
                jtcyc[j] = 0.0;
                arrive(j, 0);
            }
        }
        while (!heap.empty()) {
            Ev e = heap.top();
            pass_edges(e.first);
            if (e.first > horizon) break;
            heap.pop();
            now = e.first;
            if (e.second < 0) {
                int c = -1 - e.second;
                heap.push(Ev(now + expo(1.0 / lam[c]), e.second));
                if (n[0] >= cap[0]) { acc[o_ev] += 1.0; continue; }  // lost
                int j = new_job(c);
                jtcyc[j] = now;
                if (forkjoin) fork(j);
                else arrive(j, 0);
            } else {
                complete(e.second);
            }
        }
        return acc[o_ev];
    }
};

// ---- the output analysis of a batch-means run (qmodels/sim/stats.py, windows.py)

static int mser5(const std::vector<double>& y) {
    int m = (int)y.size() / 5;
    if (m < 2) return 0;
    std::vector<double> z(m);
    for (int i = 0; i < m; ++i) {
        double s = 0.0;
        for (int q = 0; q < 5; ++q) s += y[5 * i + q];
        z[i] = s / 5.0;
    }
    int best = 0;
    double bstat = INFINITY, s1 = 0.0, s2 = 0.0;
    std::vector<double> stat(m);
    for (int d = m - 1; d >= 0; --d) {   // suffix sums
        s1 += z[d]; s2 += z[d] * z[d];
        double cnt = m - d, ss = std::max(s2 - s1 * s1 / cnt, 0.0);
        stat[d] = ss / (cnt * cnt);
    }
    for (int d = 0; d <= m / 2; ++d)
        if (stat[d] < bstat) { bstat = stat[d]; best = d; }
    return 5 * best;
}

static double tq975(int df) {  // Student t 0.975 quantile (df 1..30, else normal)
    static const double t[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
                               2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
                               2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052,
                               2.048, 2.045, 2.042};
    return df >= 1 && df <= 30 ? t[df - 1] : 1.96;
}

static double analyse(Sim& s, double horizon, bool verbose) {
    size_t A = s.acc.size();
    int C = s.C, K = s.K;
    const double* SN = s.snap.data();
    auto val = [&](int cell, int i) { return cell < 0 ? 0.0 : SN[(size_t)cell * A + i]; };
    double w = horizon / NCELL;
    // cell series of the number present (all stations)
    std::vector<double> y(NCELL);
    for (int c0 = 0; c0 < NCELL; ++c0) {
        double q = 0.0;
        for (int i = 0; i < C * K; ++i) q += val(c0, s.o_an + i) - val(c0 - 1, s.o_an + i);
        y[c0] = q / w;
    }
    int a = std::min(mser5(y), NCELL - 1);
    int seg0 = (a + CELLS_PER_SEG - 1) / CELLS_PER_SEG, nseg = NCELL / CELLS_PER_SEG - seg0;
    int B = std::min(NBATCH, nseg), per = nseg / B;
    seg0 = NCELL / CELLS_PER_SEG - B * per;
    // per batch: Q, U, X, R per (class, station); X, R and 4 percentiles per class
    int nfig = 4 * C * K + 6 * C;
    std::vector<double> obs((size_t)B * nfig);
    const double qs[4] = {0.5, 0.9, 0.95, 0.99};
    for (int b = 0; b < B; ++b) {
        int c0 = (seg0 + b * per) * CELLS_PER_SEG, c1 = (seg0 + (b + 1) * per) * CELLS_PER_SEG;
        double len = (c1 - c0) * w;
        double* o = &obs[(size_t)b * nfig];
        auto d = [&](int i) { return val(c1 - 1, i) - val(c0 - 1, i); };
        for (int i = 0; i < C * K; ++i) {
            double comp = d(s.o_comp + i);
            o[i] = d(s.o_an + i) / len;
            o[C * K + i] = d(s.o_au + i) / len;
            o[2 * C * K + i] = comp / len;
            o[3 * C * K + i] = comp > 0 ? d(s.o_soj + i) / comp : NAN;
        }
        for (int c = 0; c < C; ++c) {
            double cyc = d(s.o_cyc + c);
            o[4 * C * K + c] = cyc / len;
            o[4 * C * K + C + c] = cyc > 0 ? d(s.o_cyct + c) / cyc : NAN;
            std::vector<long long> h(HIST_BINS, 0);
            long long tot = 0;
            for (int sg = seg0 + b * per; sg < seg0 + (b + 1) * per; ++sg)
                for (int k = 0; k < HIST_BINS; ++k) {
                    long long v = s.hist[((size_t)sg * C + c) * HIST_BINS + k];
                    h[k] += v;
                    tot += v;
                }
            for (int q = 0; q < 4; ++q) {
                double target = qs[q] * tot, cum = 0.0, x = NAN;
                for (int k = 0; k < HIST_BINS; ++k) {
                    if (cum + h[k] >= target && h[k] > 0) {
                        double f = (target - cum) / h[k];
                        x = std::exp(s.hlo + (k + f) / s.hinv);
                        break;
                    }
                    cum += h[k];
                }
                o[4 * C * K + (2 + q) * C + c] = x;
            }
        }
    }
    double check = 0.0;
    for (int i = 0; i < nfig; ++i) {
        double m = 0.0, v = 0.0;
        for (int b = 0; b < B; ++b) m += obs[(size_t)b * nfig + i];
        m /= B;
        for (int b = 0; b < B; ++b) {
            double e = obs[(size_t)b * nfig + i] - m;
            v += e * e;
        }
        double h = tq975(B - 1) * std::sqrt(v / (B - 1) / B);
        check += m + h;
        if (verbose) std::fprintf(stderr, "figure %d: %.6g +- %.3g\n", i, m, h);
    }
    return check;
}

int main(int argc, char** argv) {
    if (argc < 4) { std::fprintf(stderr, "usage: sim_fair MODEL HORIZON SEED [-v]\n"); return 2; }
    const char* model = argv[1];
    double horizon = std::atof(argv[2]);
    bool verbose = argc > 4 && !std::strcmp(argv[4], "-v");
    Sim s;
    s.gen.seed(std::strtoull(argv[3], nullptr, 10));
    const int INF = 1 << 30;
    if (!std::strcmp(model, "mm1")) {
        s.S = {0.8}; s.cap = {INF}; s.next = {-1};
    } else if (!std::strcmp(model, "closed4")) {
        s.S = {1.0, 1.1, 1.2, 1.3}; s.cap = {INF, INF, INF, INF}; s.next = {1, 2, 3, 0};
        s.open = false;
    } else if (!std::strcmp(model, "tandem")) {
        s.S = {0.5, 0.7, 0.8}; s.cap = {INF, 4, 4}; s.next = {1, 2, -1};
    } else if (!std::strcmp(model, "prio2")) {  // rho = 0.8, class 0 first
        s.S = {1.0}; s.cap = {INF}; s.next = {-1};
        s.C = 2; s.lam = {0.4, 0.4}; s.prio = true;
    } else if (!std::strcmp(model, "fj3")) {    // fork-join of 3 branches, lambda = 1
        s.S = {0.0, 0.5, 0.6, 0.7}; s.cap = {INF, INF, INF, INF}; s.next = {-1, -2, -2, -2};
        s.forkjoin = true;
    } else { std::fprintf(stderr, "unknown model %s\n", model); return 2; }
    s.K = (int)s.S.size();
    std::timespec ts0;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts0);
    double cpu0 = ts0.tv_sec + 1e-9 * ts0.tv_nsec;
    auto t0 = std::chrono::steady_clock::now();
    s.setup(horizon);
    double events = s.run(horizon);
    double check = analyse(s, horizon, verbose);
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    std::printf("%.0f %.9f %.9f %.6g\n", events, dt, ts.tv_sec + 1e-9 * ts.tv_nsec - cpu0, check);
    return 0;
}
