package serp

import "strings"

// hasAddress reports whether q holds a street address to the door
// (specs/000 §4 lists 住址, a home address, among what a serp query must
// not hold; issue 22). A place, a district or a road is not an address:
// "北京 朝阳区 美食", "南京路步行街", "Wall Street history" pass. What
// makes one is a number that says which door:
//
//   - Chinese: a house number after a road, "建国路88号", "愚园路 100 弄"
//     (a road word — 路 街 道 巷 弄 胡同 里 — then digits, then 号 or 弄,
//     not 号线, a metro line); or two levels of a building, "3栋2单元",
//     "5号楼 1201室" (digits before two of 栋 幢 座 号楼 单元 室). One
//     level alone is not enough: "3室2厅" is a flat's layout, "5号楼" a
//     building on a campus.
//   - English: a house number, one to three capitalised words and a
//     street suffix, "221B Baker Street,", "1600 Pennsylvania Avenue"; the
//     suffix must end the query or be followed by a comma, a full stop, a
//     digit or a unit ("Apt", "Suite", "#"), so that "Top 10 Best Street
//     Food" passes.
//
// Only ASCII digits count, as in the other detectors. Each byte is looked
// at a bounded number of times.
func hasAddress(q string) bool {
	levels := 0
	for i := 0; i < len(q); i++ {
		if !isDigit(q[i]) || i > 0 && (isDigit(q[i-1]) || isWord(q[i-1])) {
			continue
		}
		j := i
		for j < len(q) && isDigit(q[j]) {
			j++
		}
		if j-i > 6 {
			i = j
			continue // no house or flat has such a number
		}
		if houseNumber(q, i, j) || streetNumber(q, j) {
			return true
		}
		if buildingLevel(q, j) {
			if levels++; levels == 2 {
				return true
			}
		}
		i = j - 1
	}
	return false
}

// roadWords end the name of a road, lane or alley.
var roadWords = []string{"路", "街", "道", "巷", "弄", "胡同", "里"}

// houseNumber reports whether the digits q[i:j] are a house number: after
// a road word, before 号 or 弄 (spaces allowed on either side), and not a
// metro line (号线).
func houseNumber(q string, i, j int) bool {
	before := strings.TrimRight(q[:i], " ")
	if before == "" || before[len(before)-1] < 0x80 {
		return false // every road word is CJK
	}
	road := false
	for _, w := range roadWords {
		if strings.HasSuffix(before, w) {
			road = true
			break
		}
	}
	if !road {
		return false
	}
	after := strings.TrimLeft(q[j:], " ")
	switch {
	case strings.HasPrefix(after, "号线"):
		return false
	case strings.HasPrefix(after, "号"), strings.HasPrefix(after, "號"), strings.HasPrefix(after, "弄"):
		return true
	}
	return false
}

// levelWords name a level of a building: its block, entrance, flat.
var levelWords = []string{"号楼", "栋", "幢", "座", "单元", "室"}

// buildingLevel reports whether the digits ending at j name a level of a
// building.
func buildingLevel(q string, j int) bool {
	after := strings.TrimLeft(q[j:], " ")
	if after == "" || after[0] < 0x80 {
		return false // every level word is CJK
	}
	for _, w := range levelWords {
		if strings.HasPrefix(after, w) {
			return true
		}
	}
	return false
}

// streetSuffixes end an English street name (as written in full, or
// abbreviated with or without a full stop).
var streetSuffixes = []string{
	"Street", "St", "Avenue", "Ave", "Road", "Rd", "Boulevard", "Blvd", "Lane", "Ln",
	"Drive", "Dr", "Court", "Ct", "Place", "Pl", "Terrace", "Parkway", "Pkwy", "Way",
}

// streetNumber reports whether the digits ending at j start an English
// street address: an optional letter ("221B"), then one to three
// capitalised words, the last of them a street suffix that ends the
// address (see hasAddress).
func streetNumber(q string, j int) bool {
	if j < len(q) && isLetter(q[j]) && q[j] >= 'A' && q[j] <= 'Z' && (j+1 == len(q) || q[j+1] == ' ') {
		j++ // 221B
	}
	for words := 0; words < 4; words++ {
		if j+1 >= len(q) || q[j] != ' ' || q[j+1] < 'A' || q[j+1] > 'Z' {
			return false
		}
		j++
		k := j
		for k < len(q) && isLetter(q[k]) {
			k++
		}
		word := q[j:k]
		if word == "" || word[0] < 'A' || word[0] > 'Z' {
			return false
		}
		if words > 0 && isSuffix(word) && endsAddress(q, k) {
			return true
		}
		j = k
	}
	return false
}

func isSuffix(w string) bool {
	for _, s := range streetSuffixes {
		if w == s {
			return true
		}
	}
	return false
}

// endsAddress reports whether what follows a street suffix at k closes
// the address: the end, punctuation, a number or a unit.
func endsAddress(q string, k int) bool {
	if k < len(q) && q[k] == '.' {
		k++
	}
	rest := q[k:]
	switch {
	case rest == "":
		return true
	case rest[0] == ',' || rest[0] == ';' || rest[0] == ')' || rest[0] >= 0x80:
		return true
	}
	rest = strings.TrimLeft(rest, " ")
	return rest == "" || isDigit(rest[0]) || rest[0] == '#' || rest[0] >= 0x80 ||
		strings.HasPrefix(rest, "Apt") || strings.HasPrefix(rest, "Suite") || strings.HasPrefix(rest, "Unit")
}
