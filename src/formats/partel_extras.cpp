// Control sections, friction zones and weirs split per part as partel v8 does
// (mod_handle_sections, mod_handle_friction_zones, mod_handle_weirs).
#include "formats/partel_extras.hpp"

#include <algorithm>
#include <memory>
#include <set>
#include <unordered_map>
#include <vector>

#include "core/error.hpp"
#include "core/io.hpp"
#include "formats/fortran_text.hpp"
#include "formats/partel.hpp"

namespace anabranch::partel {
namespace {

using fortran::ListRecord;

FormatError bad(const fortran::ListReader& in, const std::string& record, const std::string& what) {
  return FormatError(in.path(), record + " (line " + std::to_string(in.line()) + ")", in.offset(), what);
}

}  // namespace

NodeParts NodeParts::of(const Plan& plan, const std::vector<std::int32_t>& nodes) {
  NodeParts r;
  for (auto n : nodes) r.at_.emplace(n, std::vector<std::pair<int, std::int32_t>>{});
  for (int p = 0; p < plan.nparts; ++p) {
    const std::int32_t* k = plan.part_knolg(p);
    for (std::int64_t i = 0; i < plan.part_npoin(p); ++i) {
      auto it = r.at_.find(k[i]);
      if (it != r.at_.end()) it->second.emplace_back(p, static_cast<std::int32_t>(i + 1));
    }
  }
  return r;
}

void NodeParts::sort() {
  for (auto& [n, v] : at_) std::sort(v.begin(), v.end());
}

const std::vector<std::pair<int, std::int32_t>>& NodeParts::parts(std::int32_t n) const {
  static const std::vector<std::pair<int, std::int32_t>> none;
  auto it = at_.find(n);
  return it == at_.end() ? none : it->second;
}

std::int32_t NodeParts::local(std::int32_t n, int p) const {
  for (auto& [q, l] : parts(n))
    if (q == p) return l;
  return 0;
}

SectionMesh whole_mesh(const std::int32_t* ikle2, std::int64_t nelem, const Coordinates& x, const Coordinates& y) {
  const auto npoin = static_cast<std::int64_t>(x.size());
  // Elements around each node, in increasing order (each once): partel scans all elements
  // in order for those holding the current node.
  auto off = std::make_shared<std::vector<std::int64_t>>(static_cast<std::size_t>(npoin) + 1, 0);
  for (std::int64_t e = 0; e < nelem * 3; ++e) ++(*off)[static_cast<std::size_t>(ikle2[e])];
  for (std::int64_t i = 0; i < npoin; ++i) (*off)[static_cast<std::size_t>(i) + 1] += (*off)[static_cast<std::size_t>(i)];
  auto around = std::make_shared<std::vector<std::int32_t>>(static_cast<std::size_t>(off->back()));
  auto end = std::make_shared<std::vector<std::int64_t>>(off->begin(), off->end() - 1);
  for (std::int64_t e = 0; e < nelem; ++e)
    for (int k = 0; k < 3; ++k) {
      const auto n = static_cast<std::size_t>(ikle2[e * 3 + k] - 1);
      auto& at = (*end)[n];
      if (at > (*off)[n] && (*around)[static_cast<std::size_t>(at - 1)] == e) continue;
      (*around)[static_cast<std::size_t>(at++)] = static_cast<std::int32_t>(e);
    }
  SectionMesh m;
  m.npoin = npoin;
  const Coordinates* px = &x;
  const Coordinates* py = &y;
  m.d2 = [px, py](std::int32_t a, std::int32_t b) {
    const double dx = (*px)[static_cast<std::size_t>(a)] - (*px)[static_cast<std::size_t>(b)];
    const double dy = (*py)[static_cast<std::size_t>(a)] - (*py)[static_cast<std::size_t>(b)];
    return dx * dx + dy * dy;
  };
  m.nearest = [px, py, npoin](const std::vector<double>& xy) {
    const std::size_t n = xy.size() / 2;
    std::vector<std::int32_t> best(n, 0);
    std::vector<double> dist(n, 0);
    for (std::int64_t i = 0; i < npoin; ++i) {
      const double xi = (*px)[static_cast<std::size_t>(i)], yi = (*py)[static_cast<std::size_t>(i)];
      for (std::size_t j = 0; j < n; ++j) {
        const double d = (xy[2 * j] - xi) * (xy[2 * j] - xi) + (xy[2 * j + 1] - yi) * (xy[2 * j + 1] - yi);
        if (i == 0 || d < dist[j]) best[j] = static_cast<std::int32_t>(i), dist[j] = d;
      }
    }
    return best;
  };
  auto d2 = m.d2;
  m.step = [off, end, around, ikle2, d2](std::int32_t pt, std::int32_t to, double& dist) {
    std::int32_t best = pt;
    for (std::int64_t i = (*off)[static_cast<std::size_t>(pt)]; i < (*end)[static_cast<std::size_t>(pt)]; ++i) {
      const std::int32_t* v = ikle2 + static_cast<std::int64_t>((*around)[static_cast<std::size_t>(i)]) * 3;
      for (int k = 0; k < 3; ++k) {
        const double d = d2(v[k] - 1, to);
        if (d < dist) dist = d, best = v[k] - 1;
      }
    }
    return best;
  };
  return m;
}

struct ControlSections::Section {
  std::string name;
  std::string record;             // "section NAME (line L)", for messages
  std::int64_t offset = 0;        // byte of its name in the file
  std::int32_t beg = 0, end = 0;  // 0-based terminal nodes
  std::vector<std::pair<std::int32_t, std::int32_t>> segments;
};

ControlSections::ControlSections(const std::string& path, const SectionMesh& mesh)
    : path_(path), secs_(std::make_shared<std::vector<Section>>()) {
  constexpr int kMaxSegments = 500;  // partel's NSEMAX
  const std::int64_t npoin = mesh.npoin;
  fortran::ListReader in(read_text_file(path), path);
  in.read(0, "comment");
  const auto head = in.read_integers(2, "NSEC, IHOWSEC");
  const std::int64_t nsec = head[0], ihowsec = head[1];
  if (nsec < 0 || nsec > 1000000) throw bad(in, "NSEC, IHOWSEC", "impossible number of sections " + std::to_string(nsec));
  auto& secs = *secs_;
  secs.resize(static_cast<std::size_t>(nsec));
  std::vector<double> points;  // terminal coordinates (IHOWSEC >= 0), begin and end of each section
  for (auto& s : secs) {
    auto d = in.read(1, "section name");
    s.name = d.empty() ? "" : d[0].substr(0, 24);  // CHARACTER(LEN=24)
    s.record = "section " + s.name + " (line " + std::to_string(in.line()) + ")";
    s.offset = static_cast<std::int64_t>(in.offset());
    if (ihowsec < 0) {
      const auto n = in.read_integers(2, "section terminal nodes");
      for (auto v : n)
        if (v < 1 || v > npoin)
          throw bad(in, "section " + s.name, "terminal node " + std::to_string(v) + " is outside the mesh (1.." + std::to_string(npoin) + ")");
      s.beg = static_cast<std::int32_t>(n[0] - 1);
      s.end = static_cast<std::int32_t>(n[1] - 1);
    } else {
      const auto c = in.read_reals(4, "section terminal coordinates");
      points.insert(points.end(), c.begin(), c.end());
    }
  }
  if (ihowsec >= 0 && nsec > 0) {  // the nearest nodes, as partel finds them
    const auto near = mesh.nearest(points);
    for (std::size_t i = 0; i < secs.size(); ++i) secs[i].beg = near[2 * i], secs[i].end = near[2 * i + 1];
  }
  if (mesh.prepare) {
    std::vector<std::pair<std::int32_t, std::int32_t>> ends;
    for (const auto& s : secs) ends.emplace_back(s.beg, s.end);
    mesh.prepare(ends);
  }
  // The walk from the first terminal node to the second: each step goes to the vertex of
  // an element around the current node that is strictly nearest the end so far.
  for (auto& s : secs) {
    if (s.beg == s.end)
      throw FormatError(path, s.record, s.offset, "both terminal nodes are node " + std::to_string(s.beg + 1) + ": the section is empty");
    std::int32_t pt = s.beg;
    double dist = mesh.d2(s.beg, s.end);
    while (true) {
      const std::int32_t best = mesh.step(pt, s.end, dist);
      if (best == pt)
        throw FormatError(path, s.record, s.offset,
                          "no path of mesh edges from node " + std::to_string(s.beg + 1) + " to node " + std::to_string(s.end + 1) +
                              " that always comes nearer the end (stuck at node " + std::to_string(pt + 1) + ")");
      s.segments.emplace_back(pt, best);
      if (static_cast<int>(s.segments.size()) > kMaxSegments)
        throw FormatError(path, s.record, s.offset, "more than " + std::to_string(kMaxSegments) + " segments (partel's NSEMAX)");
      pt = best;
      if (pt == s.end) break;
    }
  }
}

std::vector<std::int32_t> ControlSections::nodes() const {
  std::vector<std::int32_t> nodes;
  for (auto& s : *secs_)
    for (auto& [a, b] : s.segments) nodes.push_back(a), nodes.push_back(b);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

PartText ControlSections::split(const NodeParts& where, int nparts) const {
  // Each segment goes to the highest-numbered part holding both its ends.
  auto part = std::make_shared<std::vector<std::vector<int>>>();
  for (auto& s : *secs_) {
    part->emplace_back();
    for (auto& [a, b] : s.segments) {
      int to = -1;
      for (auto& [p, l] : where.parts(a))
        if (where.local(b, p) > 0) to = p;
      if (to < 0)
        throw FormatError(path_, s.record, s.offset, "no part holds both nodes " + std::to_string(a + 1) + " and " + std::to_string(b + 1));
      part->back().push_back(to);
    }
  }
  // The local numbers of the segments' ends, kept for the texts.
  auto loc = std::make_shared<NodeParts>();
  for (auto n : nodes())
    for (auto& [p, l] : where.parts(n)) loc->add(n, p, l);
  auto secs = secs_;
  return {base_name(path_), [secs, part, loc, nparts](int p) {
            std::string out = ListRecord().text("# SECTIONS PARTITIONED FOR ").text(suffix(nparts, p)).line();
            out += ListRecord().integer(static_cast<std::int64_t>(secs->size())).integer(1).line();
            for (std::size_t i = 0; i < secs->size(); ++i) {
              const auto& s = (*secs)[i];
              const auto& to = (*part)[i];
              out += ListRecord().text(s.name.substr(0, s.name.find_last_not_of(' ') + 1)).line();
              out += ListRecord().integer(std::count(to.begin(), to.end(), p)).line();
              for (std::size_t k = 0; k < s.segments.size(); ++k)
                if (to[k] == p)
                  out += ListRecord().integer(loc->local(s.segments[k].first, p)).integer(loc->local(s.segments[k].second, p)).line();
            }
            return out;
          }};
}

PartText control_sections(const std::string& path, const Plan& plan, const std::int32_t* ikle2, const Coordinates& x,
                          const Coordinates& y) {
  const ControlSections secs(path, whole_mesh(ikle2, plan.nelem, x, y));
  return secs.split(NodeParts::of(plan, secs.nodes()), plan.nparts);
}

FrictionZones::FrictionZones(const std::string& path, std::int64_t npoin, const std::function<std::int64_t(std::int32_t)>& slot,
                             std::int64_t slots)
    : path_(path), slot_(slot), zone_(static_cast<std::size_t>(slots), 0) {
  fortran::ListReader in(path);
  for (std::int64_t j = 0; j < npoin; ++j) {
    if (in.at_end())
      throw FormatError(path, "line " + std::to_string(in.line() + 1), in.here(),
                        "the file ends after " + std::to_string(j) + " of " + std::to_string(npoin) + " nodes");
    const auto v = in.read_integers(2, "node, zone");
    if (v[0] < 1 || v[0] > npoin)
      throw bad(in, "node, zone", "node " + std::to_string(v[0]) + " is outside the mesh (1.." + std::to_string(npoin) + ")");
    if (const std::int64_t at = slot(static_cast<std::int32_t>(v[0] - 1)); at >= 0) zone_[static_cast<std::size_t>(at)] = v[1];
  }
}

std::string FrictionZones::text(const std::int32_t* knolg, std::int64_t n) const {
  std::string out;
  for (std::int64_t i = 0; i < n; ++i)
    out += ListRecord().integer(i + 1).integer(zone_[static_cast<std::size_t>(slot_(knolg[i]))]).line();
  return out;
}

std::string FrictionZones::name() const { return base_name(path_); }

PartText friction_zones(const std::string& path, const Plan& plan) {
  auto zones = std::make_shared<FrictionZones>(path, plan.npoin, [](std::int32_t n) { return static_cast<std::int64_t>(n); }, plan.npoin);
  const Plan* pl = &plan;
  return {zones->name(), [zones, pl](int p) { return zones->text(pl->part_knolg(p), pl->part_npoin(p)); }};
}

namespace {
struct Weir {
  double x1, y1, z1, x2, y2, z2, rp1, rp2;
  std::int32_t n1[4], n2[4];  // 0-based
  std::int64_t ip1, ip2, deb, fin;
};
}  // namespace

struct Weirs::State {
  std::int64_t opseu = 0;
  double relax = 0;
  std::vector<Weir> w;
};

Weirs::Weirs(const std::string& path, std::int64_t npoin) : path_(path), st_(std::make_shared<State>()) {
  State* st = st_.get();
  fortran::ListReader in(read_text_file(path), path);
  in.read(0, "comment");
  const auto head = in.read(3, "number of weirs, option, relaxation");
  if (head.size() < 3) throw bad(in, "number of weirs, option, relaxation", "expected 3 values");
  std::int64_t nweirs = 0;
  try {
    nweirs = std::stoll(head[0]);
    st->opseu = std::stoll(head[1]);
    st->relax = std::stod(head[2]);
  } catch (...) {
    throw bad(in, "number of weirs, option, relaxation", "not numbers: '" + head[0] + " " + head[1] + " " + head[2] + "'");
  }
  if (nweirs < 0 || nweirs > 10000000) throw bad(in, "number of weirs", "impossible count " + std::to_string(nweirs));
  for (std::int64_t m = 0; m < nweirs; ++m) {
    in.read(0, "comment");
    const std::int64_t count = in.read_integers(1, "element count")[0];
    if (count < 0 || count > 10000000) throw bad(in, "element count", "impossible count " + std::to_string(count));
    for (int i = 0; i < 3; ++i) in.read(0, "comment");
    const std::int64_t deb = static_cast<std::int64_t>(st->w.size()) + 1, fin = deb + count - 1;
    for (std::int64_t l = 0; l < count; ++l) {
      const auto v = in.read_reals(19, "weir element");
      Weir w{};
      w.x1 = v[1], w.y1 = v[2], w.z1 = v[3];
      w.x2 = v[8], w.y2 = v[9], w.z2 = v[10];
      for (int k = 0; k < 4; ++k) {
        for (auto [src, dst] : {std::pair<double, std::int32_t*>{v[4 + k], &w.n1[k]}, {v[11 + k], &w.n2[k]}}) {
          if (src != static_cast<double>(static_cast<std::int64_t>(src)) || src < 1 || src > static_cast<double>(npoin))
            throw bad(in, "weir element " + std::to_string(st->w.size() + 1),
                      "node " + fortran::g0(src) + " is outside the mesh (1.." + std::to_string(npoin) + ")");
          *dst = static_cast<std::int32_t>(src) - 1;
        }
      }
      w.ip1 = static_cast<std::int64_t>(v[15]), w.ip2 = static_cast<std::int64_t>(v[16]);
      w.rp1 = v[17], w.rp2 = v[18];
      w.deb = deb, w.fin = fin;
      st->w.push_back(w);
    }
  }
}

std::vector<std::int32_t> Weirs::nodes() const {
  std::vector<std::int32_t> nodes;
  for (const auto& w : st_->w)
    for (int k = 0; k < 4; ++k) nodes.push_back(w.n1[k]), nodes.push_back(w.n2[k]);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

PartText Weirs::split(const NodeParts& where, int nparts) const {
  constexpr int kMaxShare = 10;  // NBMAXNSHARE
  struct Split {
    std::shared_ptr<const State> parsed;
    std::vector<std::vector<int>> parts_of_weir;    // CSEU_P: parts touching weir j, increasing
    std::vector<std::vector<std::int32_t>> recv;    // LRECV_P: per part, weir nodes, increasing
    std::vector<std::vector<std::int32_t>> send;    // LSEND_P: per part, its weir nodes, increasing
    std::vector<std::vector<std::vector<int>>> send_to;  // LSEND_PP: per part and send node
    NodeParts loc;
  };
  auto st = std::make_shared<Split>();
  st->parsed = st_;
  for (auto n : nodes())
    for (auto& [p, l] : where.parts(n)) st->loc.add(n, p, l);
  const NodeParts& numbers = st->loc;
  const std::size_t nw = st->parsed->w.size();
  st->parts_of_weir.resize(nw);
  for (std::size_t j = 0; j < nw; ++j) {
    std::set<int> ps;
    for (int k = 0; k < 4; ++k)
      for (auto n : {st->parsed->w[j].n1[k], st->parsed->w[j].n2[k]})
        for (auto& pl : numbers.parts(n)) ps.insert(pl.first);
    st->parts_of_weir[j].assign(ps.begin(), ps.end());
  }
  st->recv.resize(static_cast<std::size_t>(nparts));
  st->send.resize(static_cast<std::size_t>(nparts));
  st->send_to.resize(static_cast<std::size_t>(nparts));
  std::vector<std::set<std::int32_t>> recv_sets(static_cast<std::size_t>(nparts));
  std::vector<std::vector<std::pair<std::int32_t, std::vector<int>>>> send_lists(static_cast<std::size_t>(nparts));
  for (std::size_t j = 0; j < nw; ++j) {
    const auto& w = st->parsed->w[j];
    for (int n : st->parts_of_weir[j]) {
      for (int k = 0; k < 4; ++k)
        for (auto node : {w.n1[k], w.n2[k]}) {
          recv_sets[static_cast<std::size_t>(n)].insert(node);
          if (numbers.local(node, n) == 0) continue;
          // The parts needing this node: those of every weir naming it, first seen first.
          auto& list = send_lists[static_cast<std::size_t>(n)];
          auto it = std::find_if(list.begin(), list.end(), [&](auto& e) { return e.first == node; });
          if (it == list.end()) {
            list.emplace_back(node, std::vector<int>{});
            it = list.end() - 1;
          }
          for (int q : st->parts_of_weir[j])
            if (std::find(it->second.begin(), it->second.end(), q) == it->second.end() &&
                static_cast<int>(it->second.size()) < kMaxShare)
              it->second.push_back(q);
        }
    }
  }
  for (int n = 0; n < nparts; ++n) {
    const auto& rs = recv_sets[static_cast<std::size_t>(n)];
    st->recv[static_cast<std::size_t>(n)].assign(rs.begin(), rs.end());
    auto& list = send_lists[static_cast<std::size_t>(n)];
    std::sort(list.begin(), list.end(), [](auto& a, auto& b) { return a.first < b.first; });
    for (auto& [node, ps] : list) {
      st->send[static_cast<std::size_t>(n)].push_back(node);
      st->send_to[static_cast<std::size_t>(n)].push_back(ps);
    }
  }
  return {base_name(path_), [st, nparts](int n) {
            const NodeParts& loc = st->loc;
            const auto& recv = st->recv[static_cast<std::size_t>(n)];
            const auto& send = st->send[static_cast<std::size_t>(n)];
            const auto& send_to = st->send_to[static_cast<std::size_t>(n)];
            auto touches = [&](std::size_t j, int p) {
              const auto& ps = st->parts_of_weir[j];
              return std::binary_search(ps.begin(), ps.end(), p);
            };
            auto recv_index = [&](std::int32_t node) {
              return static_cast<std::int64_t>(std::lower_bound(recv.begin(), recv.end(), node) - recv.begin()) + 1;
            };
            auto row = [](const std::vector<std::int64_t>& v) {
              std::string s;
              for (std::size_t i = 0; i < v.size(); ++i) s += (i ? " " : "") + fortran::i0(v[i]);
              return s + "\n";
            };
            std::string out = ListRecord().text(" NB DE SINGULARITES OPTION UTAN").line();
            out += ListRecord().text("1  ").integer(st->parsed->opseu).real8(st->parsed->relax).line();
            out += ListRecord().text("#Comment line").line();
            std::int64_t mine = 0;
            for (std::size_t j = 0; j < st->parsed->w.size(); ++j) mine += touches(j, n);
            out += ListRecord().integer(mine).line();
            for (int i = 0; i < 3; ++i) out += ListRecord().text("#Comment line").line();
            for (std::size_t j = 0; j < st->parsed->w.size(); ++j) {
              if (!touches(j, n)) continue;
              const auto& w = st->parsed->w[j];
              std::string s = fortran::i0(static_cast<std::int64_t>(j + 1));
              auto f = [&](double v) { s += ' ' + fortran::fw(v, 27, 15); };
              auto i = [&](std::int64_t v) { s += ' ' + fortran::i0(v); };
              f(w.x1), f(w.y1), f(w.z1);
              for (int k = 0; k < 4; ++k) i(recv_index(w.n1[k]));
              f(w.x2), f(w.y2), f(w.z2);
              for (int k = 0; k < 4; ++k) i(recv_index(w.n2[k]));
              i(w.ip1), i(w.ip2), f(w.rp1), f(w.rp2), i(w.deb), i(w.fin);
              out += s + '\n';
            }
            out += " /1/ : FOR EACH ELEMENT, NUMBER AND LIST OF SD WHICH WILL ALSO COMPUTE DISCHARGE ON IT\n";
            for (std::size_t j = 0; j < st->parsed->w.size(); ++j) {
              if (!touches(j, n)) continue;
              ListRecord others;
              std::int64_t count = 0;
              for (int q : st->parts_of_weir[j])
                if (q != n) others.integer(q), ++count;
              out += ListRecord().integer(static_cast<std::int64_t>(j + 1)).integer(count).line();
              if (count > 0) out += others.line();
            }
            out += " /2/ : FOR EACH SD, NUMBER AND LIST OF ELEMENT WHICH WILL BE COMPUTED\n";
            std::vector<std::vector<std::int64_t>> common(static_cast<std::size_t>(nparts));
            for (std::size_t j = 0; j < st->parsed->w.size(); ++j)
              if (touches(j, n))
                for (int q : st->parts_of_weir[j])
                  if (q != n) common[static_cast<std::size_t>(q)].push_back(static_cast<std::int64_t>(j + 1));
            std::int64_t procs = 0;
            for (const auto& c : common) procs += !c.empty();
            out += ListRecord().integer(procs).line();
            for (int q = 0; q < nparts; ++q) {
              const auto& c = common[static_cast<std::size_t>(q)];
              if (c.empty()) continue;
              out += row({q, static_cast<std::int64_t>(c.size())});
              out += row(c);
            }
            out += " /3/ : FOR EACH NODE REQUIRED BY THE SD TO COMPUTE THE DISCHARGE, NUMBER, LIST AND LOCAL NUMBERING OF "
                   "NODES FROM ALL INVOLVED SD\n";
            out += ListRecord().integer(static_cast<std::int64_t>(recv.size())).line();
            for (auto node : recv) {
              const auto& ps = loc.parts(node);
              const std::size_t held = std::min<std::size_t>(ps.size(), kMaxShare);
              out += row({node + 1, static_cast<std::int64_t>(held)});
              std::vector<std::int64_t> v;
              for (std::size_t k = 0; k < held; ++k) v.push_back(ps[k].first), v.push_back(ps[k].second);
              out += row(v);
            }
            out += " /4/ : FOR EACH OTHER SD WHICH SEND VALUES, NUMBER AND LIST OF NODE (WITH LOCAL NUMBER)\n";
            std::set<int> senders;
            for (auto node : recv)
              for (auto& pl : loc.parts(node)) senders.insert(pl.first);
            out += fortran::i0(static_cast<std::int64_t>(senders.size())) + "\n";
            for (int q : senders) {
              std::vector<std::int64_t> idx, glob, lo;
              for (std::size_t i = 0; i < recv.size(); ++i) {
                const std::int32_t l = loc.local(recv[i], q);
                if (l == 0) continue;
                idx.push_back(static_cast<std::int64_t>(i + 1)), glob.push_back(recv[i] + 1), lo.push_back(l);
              }
              out += row({q, static_cast<std::int64_t>(idx.size())});
              if (!idx.empty()) out += row(idx) + row(glob) + row(lo);
            }
            out += " /5/ : FOR EACH NODE INSIDE THE SD, NUMBER AND LIST OF OTHERS SD WHICH ALSO NEED THE VALUE\n";
            out += fortran::i0(static_cast<std::int64_t>(send.size())) + "\n";
            for (std::size_t i = 0; i < send.size(); ++i) {
              out += row({send[i] + 1, static_cast<std::int64_t>(send_to[i].size())});
              std::vector<std::int64_t> v(send_to[i].begin(), send_to[i].end());
              out += row(v);
            }
            out += " /6/ : FOR EACH OTHER SD WHICH NEEDS NODE VALUES, NUMBER AND LIST OF NODES\n";
            std::set<int> needers;
            for (const auto& ps : send_to) needers.insert(ps.begin(), ps.end());
            out += ListRecord().integer(static_cast<std::int64_t>(needers.size())).line();
            for (int q : needers) {
              std::vector<std::int64_t> idx, glob, lo;
              for (std::size_t i = 0; i < send.size(); ++i) {
                if (std::find(send_to[i].begin(), send_to[i].end(), q) == send_to[i].end()) continue;
                idx.push_back(recv_index(send[i])), glob.push_back(send[i] + 1), lo.push_back(loc.local(send[i], n));
              }
              out += row({q, static_cast<std::int64_t>(idx.size())});
              out += row(idx) + row(glob) + row(lo);
            }
            return out;
          }};
}

PartText weirs(const std::string& path, const Plan& plan) {
  const Weirs w(path, plan.npoin);
  return w.split(NodeParts::of(plan, w.nodes()), plan.nparts);
}

}  // namespace anabranch::partel
