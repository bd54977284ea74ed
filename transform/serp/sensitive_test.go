package serp

import (
	"fmt"
	"strings"
	"testing"
)

// sensitiveCases are queries as models write them, each with whether it
// holds an e-mail address, a phone number or an IP address (specs/000 §4)
// and why: the true positives in every form the detectors document, and
// the true negatives that look like them (issue 9: code identifiers,
// versions, dates, weights and sets, prices, times).
var sensitiveCases = []struct {
	q    string
	want bool
	why  string
}{
	// E-mail addresses.
	{"联系 zhang.san@example.com 获取", true, "address between CJK words"},
	{"联系zhang.san@example.com获取", true, "address glued to CJK text"},
	{"me@x.org.", true, "full stop after the address"},
	{"mail First.Last+tag@sub.example.co.uk", true, "plus tag, subdomains"},
	{"send to user_name%dept@mail-server.example.net", true, "underscore, percent, hyphenated label"},
	{"Contact: support@EXAMPLE.COM", true, "upper-case domain"},
	{"邮箱：wang@qq.com", true, "after a full-width colon"},
	{"@mention only", false, "no local part"},
	{"a@b", false, "no top-level domain"},
	{"user@localhost setup", false, "no top-level domain"},
	{"user@host.c0m", false, "top-level domain not letters"},
	{"npm install react@18.2.0", false, "package version"},
	{"pkg@1.0.0-beta.2 changelog", false, "pre-release version"},
	{"@babel/core 配置", false, "scoped package"},
	{"git@github.com: Permission denied (publickey)", false, "git's SSH user"},
	{"git clone git@gitlab.com:group/repo.git", false, "git's SSH remote"},
	{"a@-bad-.com", false, "label starting with a hyphen"},
	{"a@b..com", false, "empty label"},
	{"Python @app.route 装饰器", false, "decorator"},

	// Phone numbers.
	{"13812345678", true, "mainland-China mobile"},
	{"电话13812345678", true, "mobile glued to CJK text"},
	{"电话 138-1234-5678", true, "mobile, hyphens 3-4-4"},
	{"138 1234 5678 是谁的号码", true, "mobile, spaces 3-4-4"},
	{"+86 138 1234 5678", true, "country code, spaces"},
	{"+8613812345678", true, "country code, no separators"},
	{"+86-138-1234-5678", true, "country code, hyphens"},
	{"(555) 123-4567", true, "North American, area code in parentheses"},
	{"call 555.123.4567 now", true, "North American, dots"},
	{"1-800-555-0199 customer service", true, "North American with 1"},
	{"+1 (555) 123-4567", true, "international North American"},
	{"010-12345678", true, "Beijing landline"},
	{"(0755) 1234567 深圳", true, "area code in parentheses"},
	{"01012345678", true, "landline without separators"},
	{"+44 20 7946 0958", true, "UK, international"},
	{"020 7946 0958", true, "UK, national"},
	{"+44 (0)20 7946 0958", true, "trunk zero in parentheses"},
	{"06 12 34 56 78", true, "French pairs"},
	{"+33 1 23 45 67 89", true, "French, international"},
	{"电话：139-0000-1111。", true, "full-width colon and stop around it"},
	{"138.1234.5678", true, "mobile, dots"},
	{"+852 9123 4567", true, "Hong Kong, international"},
	{"0086 138 1234 5678", true, "00 for +"},
	{"tel:+8613812345678", true, "tel: URI"},
	{"卧推 60 80 100 120 公斤", false, "separate weights (issue 9)"},
	{"0001 0002 编号", false, "numbers with leading zeros"},
	{"HIIT 20 40 60 90 120 秒", false, "separate durations (issue 9)"},
	{"深蹲 5组 12 10 8 6 4 次", false, "sets and reps"},
	{"2023 2024 2025 对比", false, "years"},
	{"2024-01-15", false, "date"},
	{"2024.01.15 发布", false, "dotted date"},
	{"10:30 开会", false, "time"},
	{"iPhone 15 Pro 256GB", false, "model and capacity"},
	{"三分化训练计划 3 天", false, "one small number"},
	{"¥1,299 的跑鞋", false, "price with a thousands comma"},
	{"1 299 000 欧元", false, "price with thousands spaces"},
	{"$19.99 monthly plan", false, "price with cents"},
	{"时间戳 1700000000 转换", false, "Unix time"},
	{"ISBN 9787111213826", false, "ISBN-13"},
	{"ISBN 0306406152", false, "ISBN-10 starting with 0"},
	{"isbn-10: 0306406152", false, "ISBN-10, labelled"},
	{"978-7-111-21382-6", false, "hyphenated ISBN"},
	{"C++ 11 14 17 20 区别", false, "language standards after C++"},
	{"SKU13812345678 库存", false, "digits glued to an ASCII word"},
	{"123-456-7890", false, "area code starting with 1"},
	{"1234 5678", false, "eight digits in two fours: no recognised grouping"},
	{"3.14159", false, "decimal"},
	{"跑步 5 公里 30 分钟 配速 6", false, "distance, time, pace"},

	// IP addresses.
	{"192.168.1.1", true, "private IPv4"},
	{"服务器192.168.1.1怎么连", true, "IPv4 glued to CJK text"},
	{"IP 8.8.8.8.", true, "full stop after the address"},
	{"ssh 10.0.0.1:22", true, "with a port"},
	{"192.168.0.0/16 子网", true, "with a prefix length"},
	{"192.168.001.001", true, "leading zeros"},
	{"10.0.0.1-10.0.0.255 范围", true, "a range"},
	{"版本 1.2.3.4", true, "a bare valid quad is an address (documented)"},
	{"1.1.1.1 DNS", true, "public resolver"},
	{"ip 172.16.254.1 ping 不通", true, "private IPv4 in a sentence"},
	{"curl http://[::1]:8080/health", true, "IPv6 loopback in a URL"},
	{"2001:db8::1", true, "IPv6"},
	{"::1", true, "IPv6 loopback"},
	{"fe80::1%eth0", true, "IPv6 with a zone"},
	{"[2001:db8::1]:8080", true, "IPv6 in brackets with a port"},
	{"::ffff:192.0.2.1", true, "IPv4-mapped IPv6"},
	{"2001:0db8:85a3:0000:0000:8a2e:0370:7334", true, "full IPv6"},
	{"C++ std::vector 用法", false, "C++ scope (issue 9)"},
	{"Foo::Bar::baz", false, "nested scopes"},
	{"A::B", false, "short scope: valid IPv6, but no digit"},
	{"rust std::io::Result", false, "Rust path"},
	{"python list[::2] 切片", false, "slice"},
	{"a[1::2]", false, "slice with a start"},
	{"10:30:00 开会", false, "time with seconds"},
	{"00:1A:2B:3C:4D:5E", false, "MAC address"},
	{"版本 1.2.3", false, "three-part version"},
	{"v1.2.3.4", false, "version mark"},
	{"1.2.3.4-beta", false, "pre-release suffix"},
	{"1.2.3.4+build", false, "build metadata"},
	{"1.2.3.4.5", false, "five parts"},
	{"300.1.1.1", false, "octet over 255"},
	{"Chrome 120.0.6099.109", false, "browser version"},
	{"deadbeef", false, "hex word"},
	{"OID 1.3.6.1.4.1", false, "object identifier"},

	// Street addresses (住址, issue 22).
	{"北京市朝阳区建国路88号 附近美食", true, "road and house number"},
	{"上海 愚园路 100 弄", true, "lane number, spaced"},
	{"南京东路100号", true, "house number after 路"},
	{"杭州文三路 478 號", true, "traditional 號"},
	{"东四十条胡同5号", true, "hutong"},
	{"望京花园3栋2单元501室", true, "block, entrance, flat"},
	{"5号楼 1201室 怎么走", true, "building and flat"},
	{"221B Baker Street, London", true, "English house number"},
	{"1600 Pennsylvania Avenue", true, "English, at the end"},
	{"350 Fifth Ave., New York", true, "abbreviated suffix with a full stop"},
	{"12 Elm St Apt 4", true, "abbreviation and a unit"},
	{"北京 朝阳区 美食", false, "a district"},
	{"南京路步行街 攻略", false, "a road, no number"},
	{"地铁2号线 首末班车", false, "metro line"},
	{"3室2厅 租房价格", false, "a flat's layout"},
	{"5号楼 食堂", false, "one building level"},
	{"深圳湾1号 房价", false, "a development's name"},
	{"Wall Street history", false, "a street, no number"},
	{"Top 10 Best Street Food", false, "a rank, not a house number"},
	{"Python 3 Way merge", false, "no name before the suffix"},
	{"第2道题 解法", false, "a question number"},
}

func TestSensitive(t *testing.T) {
	positives, negatives := 0, 0
	for _, tt := range sensitiveCases {
		if tt.want {
			positives++
		} else {
			negatives++
		}
		t.Run(tt.q, func(t *testing.T) {
			if got := sensitive(tt.q); got != tt.want {
				t.Errorf("sensitive(%q) = %v, want %v (%s)", tt.q, got, tt.want, tt.why)
			}
		})
	}
	if positives < 40 || negatives < 40 {
		t.Errorf("%d true positives and %d true negatives, want at least 40 of each", positives, negatives)
	}
}

// BenchmarkSensitive measures the detectors on long queries of the shapes
// they scan: the bytes per second must not fall as the query grows (each
// byte is looked at a bounded number of times; the cut to 80 runes comes
// after this check, so a query can be as long as the model made it).
func BenchmarkSensitive(b *testing.B) {
	for _, unit := range []string{":", "1:", "1 ", "1.", "a@", "@a.", "(1) ", "+1 ", "卧推 60 "} {
		for _, n := range []int{1 << 8, 1 << 14} {
			q := strings.Repeat(unit, n)
			b.Run(fmt.Sprintf("%q/%d", unit, len(q)), func(b *testing.B) {
				b.SetBytes(int64(len(q)))
				b.ReportAllocs()
				for b.Loop() {
					sensitive(q)
				}
			})
		}
	}
}
