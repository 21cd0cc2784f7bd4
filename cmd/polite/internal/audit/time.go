package audit

import "time"

// The times of access logs, read byte by byte: time.Parse costs more than
// the rest of a line.

// rfc3339 formats Unix nanoseconds in UTC, to the second or finer.
func rfc3339(t int64) string {
	return time.Unix(0, t).UTC().Format(time.RFC3339Nano)
}

// parseCLFTime reads the Common Log Format's time, "10/Oct/2000:13:55:36
// -0700" (26 bytes), as Unix nanoseconds.
func parseCLFTime(b []byte) (int64, bool) {
	if len(b) != 26 || b[2] != '/' || b[6] != '/' || b[11] != ':' || b[14] != ':' || b[17] != ':' || b[20] != ' ' {
		return 0, false
	}
	day, ok1 := num(b[0:2])
	month := monthOf(b[3:6])
	year, ok2 := num(b[7:11])
	h, ok3 := num(b[12:14])
	m, ok4 := num(b[15:17])
	s, ok5 := num(b[18:20])
	zone, ok6 := zoneOffset(b[21], b[22:24], b[24:26])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month == 0 {
		return 0, false
	}
	return civil(year, month, day, h, m, s, 0, zone)
}

// parseRFC3339 reads "2006-01-02T15:04:05.999999999Z07:00", a space
// allowed for the T and the fraction optional, as Unix nanoseconds, with
// the precision its fraction gives.
func parseRFC3339(b []byte) (t, res int64, ok bool) {
	if len(b) < 20 || b[4] != '-' || b[7] != '-' || (b[10] != 'T' && b[10] != 't' && b[10] != ' ') || b[13] != ':' || b[16] != ':' {
		return 0, 0, false
	}
	year, ok1 := num(b[0:4])
	month, ok2 := num(b[5:7])
	day, ok3 := num(b[8:10])
	h, ok4 := num(b[11:13])
	m, ok5 := num(b[14:16])
	s, ok6 := num(b[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return 0, 0, false
	}
	rest := b[19:]
	var frac int64
	digits := 0
	if rest[0] == '.' || rest[0] == ',' {
		var n int
		if frac, digits, n = fraction(rest[1:]); digits == 0 {
			return 0, 0, false
		}
		rest = rest[1+n:]
	}
	var zone int64
	switch {
	case len(rest) == 1 && (rest[0] == 'Z' || rest[0] == 'z'):
	case len(rest) == 6 && rest[3] == ':':
		zone, ok = zoneOffset(rest[0], rest[1:3], rest[4:6])
		if !ok {
			return 0, 0, false
		}
	case len(rest) == 5:
		zone, ok = zoneOffset(rest[0], rest[1:3], rest[3:5])
		if !ok {
			return 0, 0, false
		}
	default:
		return 0, 0, false
	}
	t, ok = civil(year, month, day, h, m, s, frac, zone)
	return t, pow10Nanos(digits), ok
}

// civil returns the Unix nanoseconds of a date and time at a zone offset
// in seconds east of UTC.
func civil(year, month, day, h, m, s int, frac, zone int64) (int64, bool) {
	if month < 1 || month > 12 || day < 1 || day > 31 || h > 23 || m > 59 || s > 60 || year < 1 {
		return 0, false
	}
	secs := daysFromCivil(year, month, day)*86400 + int64(h*3600+m*60+s) - zone
	return secs*int64(time.Second) + frac, true
}

// daysFromCivil returns the days from 1970-01-01 to a date of the
// proleptic Gregorian calendar (H. Hinnant's algorithm).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// zoneOffset reads a zone offset, "+07" "00", as seconds east of UTC.
func zoneOffset(sign byte, hh, mm []byte) (int64, bool) {
	h, ok1 := num(hh)
	m, ok2 := num(mm)
	if !ok1 || !ok2 || h > 23 || m > 59 {
		return 0, false
	}
	off := int64(h*3600 + m*60)
	switch sign {
	case '+':
		return off, true
	case '-':
		return -off, true
	}
	return 0, false
}

// num reads a run of decimal digits.
func num(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, len(b) > 0
}

// monthOf returns the month of its English abbreviation, "Jan" to "Dec",
// or 0.
func monthOf(b []byte) int {
	switch string(b) {
	case "Jan":
		return 1
	case "Feb":
		return 2
	case "Mar":
		return 3
	case "Apr":
		return 4
	case "May":
		return 5
	case "Jun":
		return 6
	case "Jul":
		return 7
	case "Aug":
		return 8
	case "Sep":
		return 9
	case "Oct":
		return 10
	case "Nov":
		return 11
	case "Dec":
		return 12
	}
	return 0
}
